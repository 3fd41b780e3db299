import Foundation

extension SpecLoader {
    /// The JSON text of a built-in spec, as shipped (for `faultline specs show`, a starting
    /// point for a user's own spec); nil for an unknown name or a missing file.
    public static func builtInSource(_ name: String) -> String? {
        guard builtInNames.contains(name), let path = SpecFiles.path(ofBuiltIn: name),
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
