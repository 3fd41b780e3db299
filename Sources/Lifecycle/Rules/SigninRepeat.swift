import Capture
import Vocabulary

/// `signin.repeat`: once signed in successfully, the client signs in again on every later
/// connection, within the window after `connected`.
public struct SigninRepeat: LifecycleRule {
    public static let id = "signin.repeat"
    public static let severity = Severity.error
    public static let summary = "after one successful sign-in, every later connection signs in again"
    public static let observes: StepKinds = [.clientFrame, .serverProtocolFrame]
    public static let hasTimers = true
    let spec: LifecycleSpec
    var signedInOn: Evidence?
    var sentOn: Set<ConnectionID> = []
    var checked: Set<ConnectionID> = []
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let frame = step.frameFacts, let kind = frame.kind else { return [] }
        if frame.from == .client, kind == .signin { sentOn.insert(frame.conn) }
        if frame.from == .server, kind == .signinSuccess {
            signedInOn = Evidence(conn: frame.conn, t: frame.t, from: .server, summary: "signin_success")
        }
        return []
    }

    public func quietUntil(_ context: RuleContext) -> Micros {
        guard let earlier = signedInOn, let view = context.currentConnection, view.conn != earlier.conn,
              let connected = view.connectedAt, !checked.contains(view.conn) else { return Micros.max }
        // `advance` records a sign-in already sent at once, whatever the time.
        if sentOn.contains(view.conn) { return Micros.min }
        let deadline = connected + spec.channels.resubscribeWindow
        if let dropped = view.droppedAt, dropped <= deadline { return Micros.max }
        return deadline
    }

    /// A sign-in still owed on the newest connection when the input ended, its window open.
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let earlier = signedInOn, let view = context.currentConnection, view.conn != earlier.conn,
              let connected = view.connectedAt, !checked.contains(view.conn), !sentOn.contains(view.conn) else { return [] }
        let cut = view.droppedAt.map { "connection \(view.conn) ended at \(formatSeconds($0))" }
            ?? "the capture ended at \(formatSeconds(now))"
        return [undetermined(context, conn: view.conn, t: connected, deadline: connected + spec.channels.resubscribeWindow,
                             "no signin yet after signing in on connection \(earlier.conn); \(cut), before the \(formatSeconds(spec.channels.resubscribeWindow)) window after connected at \(formatSeconds(connected)) closed")]
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let earlier = signedInOn, let view = context.currentConnection, view.conn != earlier.conn,
              let connected = view.connectedAt, !checked.contains(view.conn) else { return [] }
        let deadline = connected + spec.channels.resubscribeWindow
        if sentOn.contains(view.conn) { checked.insert(view.conn); return [] }
        guard now > deadline else { return [] }
        if let dropped = view.droppedAt, dropped <= deadline { return [] }
        checked.insert(view.conn)
        if checked.count > 64 { checked = [view.conn]; sentOn = sentOn.filter { $0 >= view.conn } }
        return [finding(context, conn: view.conn, t: deadline,
                        "no signin within \(formatSeconds(spec.channels.resubscribeWindow)) of connected after signing in on connection \(earlier.conn)",
                        evidence: [earlier])]
    }
}
