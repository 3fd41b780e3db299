/// The version printed by `faultline --version` and written into capture headers (the
/// proxy's and the other writers'). The one place the version is set: Tools/package reads
/// it from the built binary. The executable adds the commit (`FaultlineVersion.long`).
package enum FaultlineVersion {
    package static let number = "0.1.0"
    package static let tool = "faultline \(number)"
}
