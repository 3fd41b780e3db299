/// A spec that cannot be used, naming the file and the field: `my.json: field
/// 'backoff.phases[0].base': expected a number, found a string`.
public struct SpecError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    /// Dotted path of the field, or "" for the whole document.
    public var field: String
    public var message: String

    public init(file: String, field: String, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    public var description: String {
        field.isEmpty ? "\(file): \(message)" : "\(file): field '\(field)': \(message)"
    }
}
