import Faults

extension FuzzTarget {
    /// Each line as a `--fault` rule (and the fault it builds), the whole input as a
    /// `--faults` file, and as a duration.
    static let faultRules = FuzzTarget(
        name: "fault-rules",
        summary: "FaultRule.parse + fault construction, FaultPlan.parse, FaultDuration.parse") { input in
        let text = String(decoding: input, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let rule = try? FaultRule.parse(String(line)) else { continue }
            _ = try? FaultRegistry.kind(named: rule.kind)?.init(rule)
        }
        _ = try? FaultPlan.parse(text, name: "fuzz.faults")
        _ = FaultDuration.parse(text)
    }
}
