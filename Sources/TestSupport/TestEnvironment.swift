import Foundation
import Glibc

/// Where the things tests need live: the repository, the built `faultline` binary, the
/// Python with the `websockets` peer (made by `Tools/setup` in `.venv`), scratch folders.
public enum TestEnvironment {
    /// The package root, found from this file's path (Sources/TestSupport/...).
    public static let repoRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `FAULTLINE_PYTHON`, else `.venv/bin/python` in the repository.
    public static var python: String {
        if let path = ProcessInfo.processInfo.environment["FAULTLINE_PYTHON"], !path.isEmpty { return path }
        return repoRoot.appendingPathComponent(".venv/bin/python").path
    }

    /// `FAULTLINE_BIN`, else the debug build (Tools/test builds before testing).
    public static var faultlineBinary: String {
        if let path = ProcessInfo.processInfo.environment["FAULTLINE_BIN"], !path.isEmpty { return path }
        return repoRoot.appendingPathComponent(".build/debug/faultline").path
    }

    /// A path under `Tests/Peers` (Python peer scripts) or any repository-relative path.
    public static func path(_ relative: String) -> String { repoRoot.appendingPathComponent(relative).path }

    /// A fresh empty directory, removed by nobody: the system's temp cleaner owns it.
    public static func temporaryDirectory(_ label: String = "faultline-test") -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read, close).
    public static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return UInt16(bigEndian: address.sin_port)
    }
}
