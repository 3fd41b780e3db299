import Testing
import Foundation
import TestSupport

/// Headless Firefox (Debian's firefox-esr), started once for a whole suite by the
/// `.firefox` trait and driven per journey by `Tests/Peers/bidi_driver.py` over WebDriver
/// BiDi, which Firefox speaks itself on `--remote-debugging-port` (no geckodriver). Port 0
/// and a fresh profile: Firefox picks a free port and says which on standard error
/// ("WebDriver BiDi listening on ws://127.0.0.1:PORT"). Killing its main process ends its
/// content processes too.
final class FirefoxBrowser: @unchecked Sendable {
    // @unchecked: `process` and `bidi` are read and replaced only with `lock` held.
    static let path = "/usr/bin/firefox-esr"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// The suite's browser, set by the `.firefox` trait for the tests inside it.
    @TaskLocal static var running: FirefoxBrowser?

    private let lock = NSLock()
    private var process: ChildProcess?
    private var bidi: String?
    private var failure: String?
    private let dir: URL

    init(dir: URL) {
        self.dir = dir
        lock.withLock { launch() }
    }

    /// Firefox's BiDi address (`ws://127.0.0.1:PORT`), or why it did not start.
    func address() throws -> String {
        try lock.withLock {
            guard let bidi else { throw FirefoxFailure(message: failure ?? "firefox did not start") }
            return bidi
        }
    }

    /// A new Firefox in a new profile (after a driver was killed inside its session).
    func restart() {
        lock.withLock {
            process?.stop()
            launch()
        }
    }

    func stop() { lock.withLock { process?.stop() } }

    private func launch() {
        let profile = dir.appendingPathComponent("profile-\(UInt32.random(in: 0 ... .max))")
        try? FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        bidi = nil
        do {
            let firefox = try ChildProcess(Self.path, ["--headless", "--no-remote", "--profile", profile.path,
                                                       "--remote-debugging-port", "0", "about:blank"])
            process = firefox
            // A cold start on a loaded machine takes tens of seconds.
            let line = firefox.waitForLine(timeout: 120, stderr: true) { $0.contains("WebDriver BiDi listening on ws://") }
            guard let line, let start = line.range(of: "ws://") else {
                failure = "firefox did not announce its BiDi port: \(firefox.errorOutput.suffix(5))"
                firefox.stop()
                return
            }
            bidi = String(line[start.lowerBound...].prefix { !$0.isWhitespace })
        } catch {
            failure = "firefox did not start: \(error)"
        }
    }
}

struct FirefoxFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Starts Firefox once around a suite, hands it to the suite's tests through
/// `FirefoxBrowser.running`, and stops it when the suite ends. Give the suite
/// `.serialized` too: Firefox holds one BiDi session at a time.
struct FirefoxScope: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard FirefoxBrowser.available else { return try await function() }
        let firefox = FirefoxBrowser(dir: TestEnvironment.temporaryDirectory("firefox"))
        defer { firefox.stop() }
        try await FirefoxBrowser.$running.withValue(firefox) { try await function() }
    }
}

extension Trait where Self == FirefoxScope {
    /// One headless Firefox for the whole suite.
    static var firefox: Self { FirefoxScope() }
}

extension Browser.Engine {
    /// The suite's Firefox (see `FirefoxScope`).
    static func suiteFirefox() throws -> Browser.Engine {
        .firefox(try #require(FirefoxBrowser.running, "no Firefox: give the suite the .firefox trait"))
    }
}
