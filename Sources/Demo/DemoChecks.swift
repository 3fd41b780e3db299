import Lifecycle
import Reports
import Sim

/// Did the demo show what it promises? Each check names one part of the scenario and says
/// what was seen. Pure: it reads the sim clients' state changes and the final report.
package struct DemoChecks {
    package struct Check {
        package var name: String
        package var passed: Bool
        package var detail: String
    }

    package typealias StateChange = (client: Int, from: SimConnectionState, to: SimConnectionState, detail: String)

    package static func evaluate(changes: [StateChange], report: AnalysisReport) -> [Check] {
        func of(_ client: Int) -> [StateChange] { changes.filter { $0.client == client } }
        /// A reconnect after a change matching `cause`: a later `-> connected`.
        func reconnected(_ client: Int, after cause: (StateChange) -> Bool) -> Bool {
            let list = of(client)
            guard let index = list.firstIndex(where: cause) else { return false }
            return list[(index + 1)...].contains { $0.to == .connected }
        }
        var checks: [Check] = []

        let stale = of(1).first { $0.detail.contains("closed 4201") }
        checks.append(Check(
            name: "stalled pong: client 1 closes with 4201 and reconnects at once",
            passed: stale != nil && reconnected(1) { $0.detail.contains("closed 4201") }
                && of(1).contains { $0.detail.contains("4201") && $0.to == .connecting },
            detail: stale.map { "\($0.from.rawValue) -> \($0.to.rawValue) (\($0.detail))" } ?? "no 4201 close seen"))

        let failed = of(2).first { $0.to == .failed }
        let retried = failed != nil && of(2).drop { $0.to != .failed }.contains { $0.to == .connecting }
        checks.append(Check(
            name: "4009 termination: client 2 is failed and never retries",
            passed: failed?.detail.contains("4009") == true && !retried,
            detail: failed.map { "-> failed (\($0.detail))" + (retried ? ", then retried" : "") } ?? "client 2 never reached failed"))

        for (client, what) in [(3, "drop (FIN)"), (4, "reset (RST)")] {
            let down = of(client).first { $0.from == .connected && $0.to == .unavailable }
            checks.append(Check(
                name: "\(what): client \(client) becomes unavailable and reconnects after a backoff",
                passed: down != nil && reconnected(client) { $0.from == .connected && $0.to == .unavailable },
                detail: down.map { "connected -> unavailable (\($0.detail))" } ?? "client \(client) never became unavailable"))
        }

        let key = DemoScenario.key(5)
        let caught = report.findings.filter { finding in
            finding.rule == DemoScenario.bugRule
                && report.clients.contains { $0.info.id == finding.client && $0.info.key.contains(key) }
        }
        checks.append(Check(
            name: "bug: client 5's --bug \(DemoScenario.bug.rawValue) is caught as \(DemoScenario.bugRule)",
            passed: !caught.isEmpty,
            detail: caught.isEmpty ? "no \(DemoScenario.bugRule) finding for client 5" : "\(caught.count) finding(s)"))

        let stray = report.findings.filter { $0.severity == .error && $0.rule != DemoScenario.bugRule }
        checks.append(Check(
            name: "no other error: faults' consequences are not the clients' errors",
            passed: stray.isEmpty,
            detail: stray.isEmpty ? "none" : stray.map { "\($0.rule) (\($0.client))" }.joined(separator: ", ")))
        return checks
    }
}
