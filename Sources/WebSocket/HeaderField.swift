/// One HTTP header line: name as sent (case preserved), value as sent.
public struct HeaderField: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HeaderField {
    /// The first value of a header, its name matched case-insensitively.
    public func first(named name: String) -> String? {
        first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }
}
