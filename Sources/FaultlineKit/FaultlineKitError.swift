/// Why FaultlineKit could not do what was asked: the message names the rule, URL, port, spec
/// or file, and the reason.
public struct FaultlineKitError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
