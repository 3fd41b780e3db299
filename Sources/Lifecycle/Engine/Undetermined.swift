import Capture
import Vocabulary

/// A check a rule had opened and could not settle: its window was still open when the input
/// ended (or when the connection it watched ended early, with no later connection to carry
/// it). It is neither a pass nor a finding: reports list it apart, and JUnit shows it as
/// skipped, so a capture too short to judge a rule never reads as "no problem".
public struct Undetermined: Sendable, Hashable {
    public var rule: String
    public var severity: Severity
    public var party: Party
    public var client: String
    public var conn: ConnectionID
    /// When the check opened (the ping sent, `connected` reached, the handshake seen).
    public var t: Micros
    /// When it would have been decided.
    public var deadline: Micros
    /// What was pending and why it could not be decided, one line.
    public var message: String
    // Made only in this module, by `LifecycleRule.undetermined(_:conn:t:deadline:_:)`:
    // the memberwise initializer serves.
}

/// A rule that a run does not check at all, and why ("needs --app-secret").
public struct UncheckedRule: Sendable, Hashable {
    public var rule: String
    public var reason: String
    public init(rule: String, reason: String) {
        self.rule = rule
        self.reason = reason
    }
}

extension RuleRegistry {
    /// The spec's rules that these options leave unchecked, in the spec's order. `authSeen`:
    /// whether a subscribe or sign-in of the input carried auth (`ClientShard.authSeen`).
    /// Without any, a rule that verifies auth is not listed: a secret would verify nothing,
    /// and like any rule the input gave nothing to judge it has found nothing.
    public static func unchecked(spec: LifecycleSpec, appSecret: String?, authSeen: Bool = true) -> [UncheckedRule] {
        spec.rules.compactMap { id in
            guard let rule = type(for: id), !rule.judgesAuth || authSeen else { return nil }
            return rule.notChecked(appSecret: appSecret).map { UncheckedRule(rule: id, reason: $0) }
        }
    }
}
