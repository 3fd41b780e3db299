/// The version printed by `faultline --version` and written into capture headers.
enum FaultlineVersion {
    static let number = "0.1.0"
    static let tool = "faultline \(number)"
}
