import Protocols

/// `activity-timeout:SECONDS`: rewrite the handshake's `activity_timeout`, so stale-check
/// scenarios run in seconds instead of minutes. The handshake is the event the connection's
/// protocol entry decodes as `.connectionEstablished`; the entry does the rewriting.
public struct ActivityTimeout: HandshakeRewriteFault {
    public static let kind = "activity-timeout"
    public static let summary = "rewrite the handshake's activity_timeout to SECONDS"
    public static let example: String? = "5"

    public let seconds: Int
    var done = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("a number of seconds")
        guard let seconds = Int(text), seconds >= 1, seconds <= 86_400 else {
            throw rule.argumentError("activity timeout must be whole seconds from 1 to 86400, not '\(text)'")
        }
        self.seconds = seconds
    }

    var change: HandshakeChange { .activityTimeout(seconds: seconds) }

    func report(previous: String?) -> String { "rewrote activity_timeout \(previous ?? "none") -> \(seconds)" }
}
