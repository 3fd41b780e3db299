/// Why a packet capture cannot be read at all (exit status 2). Problems inside a readable
/// capture are warnings and notes instead.
public struct PcapError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The file ended inside a packet record: the packets before it are good, and readers
    /// keep them with a warning. False for every other error.
    public var isTornTail: Bool
    public init(_ message: String, tornTail: Bool = false) {
        self.message = message
        self.isTornTail = tornTail
    }
    public var description: String { message }
}

/// A NUL-terminated C string held in a Swift array.
func string(fromCBuffer buffer: [CChar]) -> String {
    buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
