import Protocols

/// Which JSON fields a replay does not compare as they are: fields that differ between runs
/// by nature (signatures, connection ids). Field names match at any depth, inside JSON
/// documents nested in strings too (Bird/Pusher `data` is often a JSON string).
public struct MatchRules: Sendable, Hashable {
    /// Never compared (Bird/Pusher: `auth`, a signature over the socket id, and `channel_data`).
    public var ignored: Set<String>
    /// Compared through a mapping learnt on first sight: the recorded value stands for the
    /// live value from then on (`socket_id` from the live handshake), and a replay as the
    /// client writes the live value into the frames it sends.
    public var mapped: Set<String>

    public init(ignored: Set<String> = [], mapped: Set<String> = []) {
        self.ignored = ignored
        self.mapped = mapped
    }

    /// The defaults for a protocol: the fields its table entry says differ between runs.
    public init(_ fields: VolatileFields) {
        self.init(ignored: fields.ignored, mapped: fields.mapped)
    }

    /// These rules plus more ignored field names (`--ignore-field NAME`).
    public func ignoring(_ names: [String]) -> MatchRules {
        var rules = self
        rules.ignored.formUnion(names)
        rules.mapped.subtract(names)
        return rules
    }
}
