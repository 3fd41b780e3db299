/// `activity-timeout:SECONDS`: rewrite the handshake's `activity_timeout`, so stale-check
/// scenarios run in seconds instead of minutes. The handshake is the event the connection's
/// protocol entry decodes as `.connectionEstablished`; the entry does the rewriting.
public struct ActivityTimeout: Fault {
    public static let kind = "activity-timeout"
    public static let summary = "rewrite the handshake's activity_timeout to SECONDS"
    public static let openConnectionRefusal: String? =
        "\(kind) rewrites the server's handshake event, which an open connection has already received"
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

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard !done, case .frame(let frame) = event, frame.from == .server, frame.opcode == .text,
              let handshake = frame.event, handshake.kind == .connectionEstablished
        else { return .pass }
        done = true
        guard !frame.compressed else {
            return FaultVerdict(report: "cannot rewrite a compressed handshake; relayed as is", target: .client)
        }
        guard let rewritten = context.wire?.rewriteHandshake(frame.payload, event: handshake,
                                                             .activityTimeout(seconds: seconds)) else { return .pass }
        return FaultVerdict(frame: .rewrite(rewritten.payload),
                            report: "rewrote activity_timeout \(rewritten.previous ?? "none") -> \(seconds)", target: .client)
    }
}
