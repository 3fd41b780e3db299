/// Why a packet capture cannot be read at all (exit status 2). Problems inside a readable
/// capture are warnings and notes instead.
public struct PcapError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A NUL-terminated C string held in a Swift array.
func string(fromCBuffer buffer: [CChar]) -> String {
    buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
