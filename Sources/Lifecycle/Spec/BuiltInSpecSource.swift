extension SpecLoader {
    /// The JSON text of a built-in spec, as embedded in the binary (for `faultline specs
    /// show`, a starting point for a user's own spec); nil for an unknown name.
    public static func builtInSource(_ name: String) -> String? {
        SpecFiles.embedded(name).map { String(decoding: $0, as: UTF8.self) }
    }
}
