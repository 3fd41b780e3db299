import Capture
import Vocabulary

/// The shape of the rules that take no step and judge only as record time passes
/// (`stale.ping-missing`, `stale.pong-missing`, `server.pong-missing`,
/// `stale.close-missing`): what they watch is in the connection's view, and they find
/// things only when their deadlines pass (`advance`). Said once here, so that the engine
/// hands them no step and asks their timers.
protocol TimerOnlyRule: LifecycleRule {}

extension TimerOnlyRule {
    public static var observes: StepKinds { [] }
    public static var hasTimers: Bool { true }
    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] { [] }
}
