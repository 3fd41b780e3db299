import Capture
import Faults
import Lifecycle
import Sim
import Vocabulary

/// What `faultline demo` stages, as data: the sim server's and clients' settings, the
/// proxy's fault rules scoped to single clients, and the spec the recording is checked
/// against (the bird spec with the demo's shortened client timings). Pure: nothing here
/// opens a socket.
///
/// Each sim client sends `User-Agent: faultline-sim/0.1.0 (client N)`, so a rule with
/// `client=(client N)` acts on client N's connections only. Client 1 connects first (the
/// others `clientsDelay` later), so its first connection is the proxy's connection 1 and
/// the stall can be limited to it with `conn=1`: one stale cycle, not one every 3 s.
///
/// | client | what happens | expected |
/// | --- | --- | --- |
/// | 1 | first connection: activity timeout rewritten to 2 s, pongs stalled | ping, close 4201 after 1 s, reconnect at once |
/// | 2 | `close:4009` 3 s after connecting | `failed`, no retry |
/// | 3 | `drop` (FIN) 5 s after each connect | `unavailable`, backoff reconnect |
/// | 4 | `reset` (RST) 7 s after each connect | `unavailable`, backoff reconnect |
/// | 5 | `--bug reuse-auth`, `drop` 4 s after each connect | finding `channels.stale-auth` on its reconnect |
/// | 6+ | nothing | stay connected |
package struct DemoScenario {
    package static let minimumClients = 5
    /// How long after client 1 the other clients connect.
    package static let clientsDelay: Int64 = 200_000
    /// The stale check: the rewritten activity timeout and the client's pong timeout.
    package static let activityTimeoutSeconds = 2
    package static let pongTimeout: SimMicros = SimDuration.second
    /// The window the analyzer gives a reconnected client to re-subscribe.
    package static let resubscribeWindow: Micros = 3_000_000
    /// The rule id the buggy client (5) must be caught by.
    package static let bugRule = "channels.stale-auth"
    package static let bug = SimBug.reuseAuth

    package var clients: Int

    package init(clients: Int) { self.clients = clients }

    /// "(client N)": a substring of client N's User-Agent and of no other.
    package static func key(_ client: Int) -> String { "(client \(client))" }

    package var faultRules: [String] {
        [
            "activity-timeout:\(Self.activityTimeoutSeconds),conn=1,client=\(Self.key(1))",
            "stall-pongs,conn=1,client=\(Self.key(1))",
            "close:4009,after=3s,reason=terminated,client=\(Self.key(2))",
            "drop,after=5s,client=\(Self.key(3))",
            "reset,after=7s,client=\(Self.key(4))",
            "drop,after=4s,client=\(Self.key(5))",
        ]
    }

    package var server: SimServerSettings {
        var settings = SimServerSettings()
        // No periodic server events: client 1's connection must fall silent for its stale
        // check. Traffic still flows: the other clients' client events on shared channels.
        settings.eventInterval = nil
        return settings
    }

    package var clientSettings: [SimClientSettings] {
        (1...clients).map { number in
            var settings = SimClientSettings()
            settings.channels = number == 1 ? ["news"] : ["news", "private-chat", "presence-lobby"]
            settings.userID = "demo-user-\(number)"
            settings.pongTimeout = Self.pongTimeout
            settings.triggerInterval = number == 1 ? nil : 2 * SimDuration.second
            if number == 5 { settings.bugs = [Self.bug] }
            return settings
        }
    }

    /// The demo clients' timings, as spec values.
    package var overrides: SpecOverrides {
        var overrides = SpecOverrides()
        overrides.pongTimeout = Micros(Self.pongTimeout)
        overrides.resubscribeWindow = Self.resubscribeWindow
        return overrides
    }

    /// The bird spec with the demo clients' timings.
    package func spec() throws(SpecError) -> LifecycleSpec {
        overrides.apply(to: try SpecLoader.load(Self.specName))
    }

    package static let specName = "bird"

    /// What the capture's header records, so that `faultline analyze` on it, without
    /// flags, judges it as the demo does.
    package var recordedSpec: RecordedSpec { RecordedSpec(name: Self.specName, overrides: overrides.recorded) }

    /// The same analysis from the command line: the capture carries the demo's spec.
    package static func analyzeCommand(_ capture: String) -> String { "faultline analyze \(capture)" }

    package func parsedRules() throws -> [FaultRule] {
        try faultRules.map { try FaultRule.parse($0) }
    }
}
