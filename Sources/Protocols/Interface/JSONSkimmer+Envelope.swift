import JSON

extension JSONSkimmer {
    /// What a payload that may be an envelope (a JSON object whose members say what the
    /// message is) holds: the members asked for, or, for the rare object with an escaped
    /// key, its tree.
    public enum Envelope {
        case members(Members)
        case tree(JSONValue)
    }

    /// The members `keys` of `bytes` when it is a JSON object; nil when it is none (its
    /// first byte past white space is not `{`, or it is no valid JSON object). The
    /// envelope step of every JSON-object protocol: a text that cannot be an object is
    /// refused before any scan, and a key with an escape goes to `JSONParser`.
    /// (Inlinable: the decoders call it on every text message, from their own modules.)
    @inlinable
    public static func envelope(of bytes: UnsafeBufferPointer<UInt8>, named keys: [StaticString]) -> Envelope? {
        guard let first = bytes.first(where: { !isJSONWhitespace($0) }), first == UInt8(ascii: "{") else { return nil }
        switch members(of: bytes, named: keys) {
        case .notAnObject: return nil
        case .needsParser: return (try? JSONParser.parse(bytes)).map(Envelope.tree)
        case .members(let members): return .members(members)
        }
    }

    /// `envelope(of:named:)` over an array's bytes.
    public static func envelope(of bytes: [UInt8], named keys: [StaticString]) -> Envelope? {
        bytes.withUnsafeBufferPointer { envelope(of: $0, named: keys) }
    }
}
