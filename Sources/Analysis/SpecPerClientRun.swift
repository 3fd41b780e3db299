import CLI
import Lifecycle
import Reports

/// An `AnalysisRun`'s side of judging each client by its own pack: the built-in specs,
/// loaded once with the run's overrides, every input's clients' spec numbers as they are
/// found, and what the report and the notice say of them.
struct SpecPerClientRun {
    let overrides: SpecOverrides
    let command: String
    private var loaded: [String: LifecycleSpec?] = [:]
    /// The specs by number (the same for every input: the fallback, then the table's).
    private(set) var specs: [LifecycleSpec] = []
    /// Every client's spec number, in report order (input by input, by ordinal).
    private(set) var numbers: [Int] = []

    init(overrides: SpecOverrides, command: String) {
        self.overrides = overrides
        self.command = command
    }

    /// The specs for one input's analysis, `fallback` (its options) first.
    mutating func specs(fallback: AnalyzerOptions) -> ClientSpecs {
        var loaded = self.loaded
        let overrides = self.overrides
        let command = self.command
        let specs = ClientSpecs(fallback: fallback) { name in
            if let known = loaded[name] { return known }
            let spec = (try? SpecResolution.load(name, given: false, command: command)).map { overrides.apply(to: $0) }
            loaded[name] = spec
            return spec
        }
        self.loaded = loaded
        self.specs = specs.options.map(\.spec)
        return specs
    }

    /// An input's clients' spec numbers, by ordinal.
    mutating func add(_ numbers: [Int16]) {
        self.numbers += numbers.map { Int(max(0, $0)) }
    }

    /// The specs that judged at least one client, by number; `[fallback]` when none did.
    func used(fallback: LifecycleSpec) -> [LifecycleSpec] {
        let used = Set(numbers)
        let judged = specs.indices.filter { used.contains($0) }.map { specs[$0] }
        return judged.isEmpty ? [fallback] : judged
    }

    /// The line for standard error when several specs judged.
    func notice(fallback: LifecycleSpec) -> String? {
        SpecUse.line(uses, fallback: fallback.name)
    }

    /// Each used spec with its count of clients.
    private var uses: [SpecUse] {
        var counts = Array(repeating: 0, count: specs.count)
        for number in numbers where counts.indices.contains(number) { counts[number] += 1 }
        return counts.indices.filter { counts[$0] > 0 }.map { SpecUse(spec: specs[$0], clients: counts[$0]) }
    }

    /// The report told which spec judged each client (when several did).
    func mark(_ report: inout AnalysisReport, fallback: LifecycleSpec) {
        report.judgedPerClient(specs: specs, numbers: numbers)
    }

    /// The rules of `specs` that were not checked, each once (the first spec's reason).
    static func unchecked(_ specs: [LifecycleSpec], appSecret: String?, authSeen: Bool) -> [UncheckedRule] {
        var seen: Set<String> = []
        return specs.flatMap { RuleRegistry.unchecked(spec: $0, appSecret: appSecret, authSeen: authSeen) }
            .filter { seen.insert($0.rule).inserted }
    }
}
