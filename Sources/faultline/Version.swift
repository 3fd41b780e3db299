/// The version printed by `faultline --version` and written into capture headers. The one
/// place the version is set: Tools/package reads it from the built binary.
enum FaultlineVersion {
    static let number = "0.1.0"
    static let tool = "faultline \(number)"
    /// `faultline --version`: the version and the commit it was built from (BuildInfo is
    /// written at build time by the BuildInfo plugin).
    static let long = "\(Self.tool) (commit \(BuildInfo.commit))"
}
