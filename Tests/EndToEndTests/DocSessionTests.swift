import Foundation
import Glibc
import Testing
import TestSupport

/// The docs test: every session marked in the README and `docs/` (see `DocSession` for the
/// marker) runs against the built binary, and its output must match the page's, so a
/// drifted sample fails the test command instead of misleading a reader.
@Suite struct DocSessionTests {
    /// The pages that may hold sessions.
    static let pages: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.path("docs"))) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }()

    /// Every marked session; a page that cannot be read or parsed yields none here and fails
    /// `everyMarkerParses` instead.
    static let sessions: [DocSession] = pages.flatMap { page in
        (try? DocSession.parse(String(contentsOfFile: TestEnvironment.path(page), encoding: .utf8), file: page)) ?? []
    }

    @Test func everyMarkerParses() throws {
        for page in Self.pages {
            _ = try DocSession.parse(String(contentsOfFile: TestEnvironment.path(page), encoding: .utf8), file: page)
        }
        // The pages whose samples issue 34 found drifted are among those run.
        let marked = Set(Self.sessions.map(\.file))
        for page in ["README.md", "docs/control-api.md", "docs/forward-proxy.md", "docs/toxiproxy.md", "docs/faults.md"] {
            #expect(marked.contains(page), "no session marked in \(page)")
        }
    }

    @Test(arguments: sessions) func sessionOutputMatchesThePage(_ session: DocSession) throws {
        let folder = TestEnvironment.temporaryDirectory("faultline-docs")
        // The sample captures, as the pages name them from the repository's root.
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("Captures").path,
                                                   withDestinationPath: TestEnvironment.path("Captures"))
        var ports: [Int: Int] = [:]
        for port in session.ports {
            let stand = try #require(Self.standIn(for: port, avoiding: Set(ports.values)), "\(session): no free port for \(port)")
            ports[port] = stand
        }
        let shell = DocShell(folder: folder.path)
        var backgrounds: [ChildProcess] = []
        defer { backgrounds.forEach { $0.stop() } }
        for preparation in session.preparations {
            switch preparation {
            case .setup(let setup):
                let run = try shell.run(DocSession.substitute(setup, ports))
                try #require(run.status == 0, "\(session): setup '\(setup)' failed: \(run.output)")
            case .background(let text):
                let command = DocSession.substitute(text, ports)
                let child = try shell.start(command)
                backgrounds.append(child)
                // Started once it has printed every port it listens on.
                for port in ports.values where Self.listens(command, on: port) {
                    try #require(child.waitForLine(timeout: 30) { $0.contains(":\(port)") } != nil,
                                 "\(session): '\(command)' did not report port \(port): \(child.output)")
                }
            case .wait(let text):
                let child = try #require(backgrounds.last)
                try #require(child.waitForLine(timeout: 30) { $0.contains(text) } != nil,
                             "\(session): no line '\(text)' from the background command: \(child.output)")
            }
        }
        let exports = session.environment.map { "export " + DocShell.quoted(DocSession.substitute($0, ports)) }
        let outputs = try shell.runSteps(session.steps.map { DocSession.substitute($0.command, ports) }, after: exports)
        for (step, actual) in zip(session.steps, outputs) {
            let expected = step.expected.map { DocSession.substitute($0, ports) }
            #expect(DocOutputMatch.matches(actual, expected), """
                \(session): '$ \(step.command)' printed
                \(actual.joined(separator: "\n"))
                where the page shows
                \(expected.joined(separator: "\n"))
                """)
        }
    }

    /// A free port with as many digits as `port`, so tables keep the page's column widths:
    /// the kernel's choice for five digits, else a random one of that many digits that binds.
    static func standIn(for port: Int, avoiding taken: Set<Int>) -> Int? {
        let digits = String(port).count
        for _ in 0..<200 {
            let candidate = digits == 5 ? Int(TestEnvironment.freePort())
                : Int.random(in: max(1024, Int(pow(10, Double(digits - 1))))..<Int(pow(10, Double(digits))))
            if String(candidate).count == digits, !taken.contains(candidate), isFree(candidate) { return candidate }
        }
        return nil
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether a command line listens on `port` (`--listen`, `--control`, `--toxiproxy-api`).
    static func listens(_ command: String, on port: Int) -> Bool {
        ["--listen", "--control", "--toxiproxy-api"].contains { option in
            command.contains("\(option) 127.0.0.1:\(port)") || command.contains("\(option) http://127.0.0.1:\(port)")
        }
    }

    /// The README's in-process example is the example package's test, as it is built and run.
    @Test func theReadmeShowsTheExampleClientTestAsItIs() throws {
        let readme = try String(contentsOfFile: TestEnvironment.path("README.md"), encoding: .utf8)
        let example = try String(contentsOfFile: TestEnvironment.path("Examples/ClientTests/Tests/ReconnectingClientTests/ReconnectTests.swift"),
                                 encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "```"), "README's FaultlineKit example differs from ReconnectTests.swift")
    }

    @Test func placeholdersMatchWhatTheyStandFor() {
        #expect(DocOutputMatch.lineMatches("1   open   127.0.0.1:35458  0.5s", "1   open   127.0.0.1:[..]  [..]s"))
        #expect(!DocOutputMatch.lineMatches("1   open   127.0.0.1:35458  0.5s", "2   open   [..]"))
        #expect(!DocOutputMatch.lineMatches("ab", "a[..]bb"))
        #expect(DocOutputMatch.matches(["a", "b", "c", "d"], ["a", "...", "d"]))
        #expect(DocOutputMatch.matches(["a", "d"], ["a", "...", "d"]))
        #expect(!DocOutputMatch.matches(["a", "b"], ["a"]))
        #expect(!DocOutputMatch.matches(["a"], ["a", "b"]))
        #expect(DocSession.substitute("127.0.0.1:8474 18474 8474x", [8474: 40001]) == "127.0.0.1:40001 18474 40001x")
    }

    @Test func aMarkerWithoutACommandOrWithATypoIsAnError() throws {
        #expect(throws: DocSessionError.self) {
            try DocSession.parse("<!-- session\nport: 1\n-->\n```\n$ true\n```\n", file: "x.md")
        }
        #expect(throws: DocSessionError.self) { try DocSession.parse("<!-- session\n-->\n```\nno command\n```\n", file: "x.md") }
        let parsed = try? DocSession.parse("<!-- session\nports: 7001\n-->\n```\n$ a \\\n  b\nout\n$ c\n```\n", file: "x.md")
        #expect(parsed?.first?.steps.map(\.command) == ["a \\\n  b", "c"])
        #expect(parsed?.first?.steps.first?.expected == ["out"])
        // A marker inside a fenced block is an example of one, not a session.
        #expect(try DocSession.parse("```\n<!-- session\n-->\n```\n", file: "x.md").isEmpty)
    }
}

/// Runs a session's commands with bash in its folder, `faultline` (the build under test)
/// first on the PATH and the control API's variables cleared; standard error is part of the
/// output, as a terminal shows it.
struct DocShell {
    var folder: String

    private var environment: [String: String] {
        let binaries = URL(fileURLWithPath: TestEnvironment.faultlineBinary).deletingLastPathComponent().path
        return ["PATH": binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }
    /// `text` as one single-quoted shell word.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    private static let prelude = "unset FAULTLINE_CONTROL FAULTLINE_CONTROL_TOKEN; exec 2>&1\n"

    func run(_ command: String) throws -> (status: Int32?, output: String) {
        let child = try ChildProcess("/bin/bash", ["-c", Self.prelude + command], environment: environment,
                                     currentDirectory: folder)
        let status = child.waitForExit(timeout: 60)
        if status == nil { child.stop() }
        return (status, child.output.joined(separator: "\n"))
    }

    func start(_ command: String) throws -> ChildProcess {
        try ChildProcess("/bin/bash", ["-c", Self.prelude + "exec " + command], environment: environment,
                         currentDirectory: folder)
    }

    /// The commands in one shell (so `export` carries over), each preceded by a separator
    /// line; the output lines of each, in order.
    func runSteps(_ commands: [String], after exports: [String]) throws -> [[String]] {
        let separator = "@@faultline-docs-step@@"
        let script = exports.map { $0 + "\n" }.joined() + commands.map { "echo '\(separator)'\n\($0)\n" }.joined()
        let child = try ChildProcess("/bin/bash", ["-c", Self.prelude + script], environment: environment,
                                     currentDirectory: folder)
        guard child.waitForExit(timeout: 120) != nil else {
            child.stop()
            throw DocSessionError("the session did not end within 120 s: \(child.output)")
        }
        var outputs: [[String]] = []
        for line in child.output {
            // A command's last line without a newline has the next separator glued to it.
            if line.hasSuffix(separator) {
                let before = String(line.dropLast(separator.count))
                if !before.isEmpty, !outputs.isEmpty { outputs[outputs.count - 1].append(before) }
                outputs.append([])
            } else if !outputs.isEmpty {
                // A terminal does not show an HTTP head's CR, and neither does the page.
                outputs[outputs.count - 1].append(line.hasSuffix("\r") ? String(line.dropLast()) : line)
            }
        }
        return outputs
    }
}
