import Vocabulary

extension FaultlineVersion {
    /// `faultline --version`: the version and the commit it was built from (BuildInfo is
    /// written at build time by the BuildInfo plugin).
    static let long = "\(Self.tool) (commit \(BuildInfo.commit))"
}
