import JSON

/// The lifecycle spec a capture was recorded under: the spec the proxy was given (`--spec`,
/// or the one `--live` checks) and the spec values set on its command line (`--pong-timeout`
/// ...). Carried in the header so that `analyze` judges the capture by the same spec
/// without its flags being remembered. Written as
/// `"spec":{"name":"bird","pong_timeout_us":1000000}`.
public struct RecordedSpec: Sendable, Hashable {
    /// A built-in spec's name or a spec file's path, as the proxy was given it.
    public var name: String
    /// Values set on the proxy's command line, in microseconds, by key ("pong_timeout"),
    /// in the order they were written. Keys a reader does not know are kept, not applied.
    public var overrides: [Override]

    public struct Override: Sendable, Hashable {
        public var key: String
        public var micros: Int64
        public init(key: String, micros: Int64) {
            self.key = key
            self.micros = micros
        }
    }

    public init(name: String, overrides: [Override] = []) {
        self.name = name
        self.overrides = overrides
    }

    /// The suffix of every override's key in the header: values are microseconds.
    static let unitSuffix = "_us"

    /// The header's `spec` object.
    var json: JSONObject {
        JSONObject([(key: "name", value: .string(name))]
            + overrides.map { (key: $0.key + Self.unitSuffix, value: .int($0.micros)) })
    }

    /// Reads the header's `spec` object: `name` a string, every `*_us` key a duration in
    /// microseconds (from 0 to below `RecordTime.limit`); other keys are ignored.
    init(json object: JSONObject) throws(RecordDecodingError) {
        let f = Fields(object: object)
        name = try f.string("name")
        overrides = []
        for (key, value) in object.members where key.hasSuffix(Self.unitSuffix) && key.count > Self.unitSuffix.count {
            guard !value.isNull else { continue }
            overrides.append(Override(key: String(key.dropLast(Self.unitSuffix.count)),
                                      micros: try f.duration("spec." + key, value)))
        }
    }
}
