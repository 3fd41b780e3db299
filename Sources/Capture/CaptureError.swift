/// Unusable capture input, with the place it was found: `file:line: message`.
/// Commands print it as one line and exit with status 2.
public struct CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as the user gave it ("-" for standard input).
    public var file: String
    /// 1-based line number, 0 when the error is not about a line (the file cannot be opened).
    public var line: Int
    /// Byte offset of the start of that line in the file.
    public var offset: Int64
    public var message: String

    public init(file: String, line: Int, offset: Int64, message: String) {
        self.file = file
        self.line = line
        self.offset = offset
        self.message = message
    }

    public var description: String {
        let name = file == "-" ? "<stdin>" : file
        return line > 0 ? "\(name):\(line): \(message)" : "\(name): \(message)"
    }
}
