import Analysis
import Capture
import CLI
import Faults
import Lifecycle
import Vocabulary

/// The spec values `analyze` and `proxy` both take (`--tolerance` ... `--resubscribe-window`),
/// declared once (how a capture's recorded spec and the command line combine is
/// `SpecResolution`'s).
enum SpecOptions {
    /// One option per `SpecOverrides` key: "pong_timeout" is `--pong-timeout`.
    static let overrides: [OptionSpec] = [
        OptionSpec("tolerance", value: "seconds", help: "Timing tolerance on every delay (default: the spec's, 0.25 for bird)."),
        OptionSpec("immediate-tolerance", value: "seconds", help: "How soon 'immediately' must be (default: the spec's, 0.5 for bird)."),
        OptionSpec("base", value: "seconds", help: "Backoff base of the first phase (default: the spec's, 1 for bird)."),
        OptionSpec("cap", value: "seconds", help: "Backoff cap of the first phase (default: the spec's, 30 for bird)."),
        OptionSpec("activity-timeout", value: "seconds", help: "Activity timeout when the handshake gives none (default: the spec's, 120)."),
        OptionSpec("pong-timeout", value: "seconds", help: "Pong timeout (default: the spec's, 30)."),
        OptionSpec("resubscribe-window", value: "seconds", help: "Window to resubscribe and sign in again (default: the spec's, 10)."),
    ]

    /// The spec `--spec` means when not given.
    static let defaultSpec = SpecChoice.defaultSpec

    static func flag(_ key: String) -> String { SpecResolution.flag(key) }

    /// The spec values given on the command line.
    static func overrides(_ arguments: ParsedArguments) throws(UsageError) -> SpecOverrides {
        var overrides = SpecOverrides()
        for key in SpecOverrides.keys { overrides[key] = try duration(arguments, flag(key)) }
        return overrides
    }

    /// One duration syntax for every duration option: a plain number is seconds, and 250ms,
    /// 1.5s or 2m mean what they say.
    static func duration(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> Micros? {
        try arguments.parse(name, as: "a duration >= 0: seconds (0.25) or with a unit (250ms, 1.5s, 2m)") { text in
            if let plain = Double(text) { return plain >= 0 && plain < 1e9 ? micros(seconds: plain) : nil }
            guard case .success(let value) = FaultDuration.parse(text), value >= 0, value < 1_000_000_000_000_000 else { return nil }
            return value
        }
    }

    /// Loads a spec by name or file; a failure blames `--spec` only when it was given.
    static func load(_ name: String, _ arguments: ParsedArguments) throws(UsageError) -> LifecycleSpec {
        try SpecResolution.load(name, given: !arguments.all("spec").isEmpty, command: arguments.command)
    }

    /// What a proxy's capture records: the spec it checks live (`--spec`, or bird when
    /// spec values are given without it) or would be judged by, and the values given on
    /// its command line. Nil when no spec option was given at all: the capture then says
    /// nothing, and analyze detects the spec as `--live` did.
    static func recorded(_ arguments: ParsedArguments) throws(UsageError) -> RecordedSpec? {
        let values = try overrides(arguments).recorded
        let name = arguments.all("spec").last
        // `--live` alone detects its spec as analyze will: nothing to record then.
        guard name != nil || !values.isEmpty else { return nil }
        return RecordedSpec(name: name ?? defaultSpec, overrides: values)
    }
}
