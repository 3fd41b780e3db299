import Capture
import Vocabulary

/// Overrides as a capture header carries them (`RecordedSpec.overrides`), one key per
/// value: "pong_timeout" is `--pong-timeout` on the command line and `pongTimeout` here.
extension SpecOverrides {
    /// Every override, in the order the header writes them, by its key.
    public static let keys: [String] = [
        "tolerance", "immediate_tolerance", "base", "cap", "activity_timeout", "pong_timeout", "resubscribe_window",
    ]

    /// The value set for `key`, nil when unset or when the key is unknown.
    public subscript(key: String) -> Micros? {
        get {
            switch key {
            case "tolerance": tolerance
            case "immediate_tolerance": immediateTolerance
            case "base": base
            case "cap": cap
            case "activity_timeout": activityTimeout
            case "pong_timeout": pongTimeout
            case "resubscribe_window": resubscribeWindow
            default: nil
            }
        }
        set {
            switch key {
            case "tolerance": tolerance = newValue
            case "immediate_tolerance": immediateTolerance = newValue
            case "base": base = newValue
            case "cap": cap = newValue
            case "activity_timeout": activityTimeout = newValue
            case "pong_timeout": pongTimeout = newValue
            case "resubscribe_window": resubscribeWindow = newValue
            default: break
            }
        }
    }

    /// The values set, in `keys` order.
    public var recorded: [RecordedSpec.Override] {
        Self.keys.compactMap { key in self[key].map { RecordedSpec.Override(key: key, micros: $0) } }
    }

    /// The overrides a header recorded; keys this version does not know are left out
    /// (the caller names them: `RecordedSpec.overrides` keeps every key).
    public init(recorded: [RecordedSpec.Override]) {
        self.init()
        for override in recorded where Self.keys.contains(override.key) { self[override.key] = override.micros }
    }

    /// `other`'s values where it has them, this one's elsewhere: command-line flags over a
    /// capture's recorded values.
    public func overridden(by other: SpecOverrides) -> SpecOverrides {
        var merged = self
        for key in Self.keys where other[key] != nil { merged[key] = other[key] }
        return merged
    }
}
