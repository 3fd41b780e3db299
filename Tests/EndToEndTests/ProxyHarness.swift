import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// A Python `websockets` server, `faultline proxy` in front of it, and helpers to run the
/// Python client through the proxy and read the capture back. Every wait is bounded; the
/// children are killed with SIGKILL when the test ends.
final class ProxyRig {
    static let peers = TestEnvironment.path("Tests/Peers/proxy_peers.py")

    let server: ChildProcess
    let proxy: ChildProcess
    let serverPort: Int
    let proxyPort: Int
    let capturePath: String

    /// Starts the server (`proxy_peers.py server ARGS`) and the proxy recording to a fresh
    /// file with `proxyArguments` added.
    /// `launcher`: a command the proxy runs under (such as `prlimit --nofile=N`).
    init(server serverArguments: [String] = [], proxy proxyArguments: [String] = [], record: Bool = true,
         upstreamPath: String = "", launcher: [String] = []) throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-proxy")
        capturePath = directory.appendingPathComponent("capture.jsonl").path
        server = try ChildProcess.python(Self.peers, ["server"] + serverArguments)
        let listening = try #require(server.waitForLine(timeout: 20) { $0.contains("\"listening\"") },
                                     "the Python server did not start: \(server.errorOutput.joined(separator: "\n"))")
        serverPort = try #require(Int(PeerLine(listening)["port"]?.intValue ?? -1))
        var arguments = ["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(serverPort)\(upstreamPath)"]
        if record { arguments += ["--record", capturePath] }
        if let program = launcher.first {
            proxy = try ChildProcess(program, Array(launcher.dropFirst()) + [TestEnvironment.faultlineBinary] + arguments + proxyArguments)
        } else {
            proxy = try ChildProcess.faultline(arguments + proxyArguments)
        }
        proxyPort = try listeningPort(of: proxy, "the proxy")
    }

    var url: String { "ws://127.0.0.1:\(proxyPort)" }

    /// Runs `proxy_peers.py client URL ARGS` to completion (bounded) and returns its lines.
    func client(path: String = "/app/test-key", _ arguments: [String] = [], timeout: Double = 60) throws -> [PeerLine] {
        try peerLines([Self.peers, "client", url + path] + arguments, timeout: timeout)
    }

    /// SIGINT to the proxy: it must exit 0 with the capture complete. Returns the records.
    func stopProxy() throws -> CaptureContents {
        try stopRecordingProxy(proxy, capture: capturePath)
    }

    deinit {
        proxy.stop()
        server.stop()
    }
}

/// Waits (bounded) for the "listening on HOST:PORT" line of a `faultline` server (proxy,
/// replay, sim server) and returns its port; `what` names it in the failure.
func listeningPort(of process: ChildProcess, _ what: String) throws -> Int {
    let line = try #require(process.waitForLine(timeout: 20) { $0.hasPrefix("listening on ") },
                            "\(what) did not start: \(process.errorOutput.joined(separator: "\n"))")
    return try #require(line.split(separator: ":").last.flatMap { Int($0) })
}

/// SIGINT to a recording proxy: it must exit 0 with its capture complete. Returns the records.
func stopRecordingProxy(_ proxy: ChildProcess, capture: String) throws -> CaptureContents {
    proxy.signal(SIGINT)
    let status = proxy.waitForExit(timeout: 20)
    #expect(status == 0, "proxy exit status after SIGINT; stderr: \(proxy.errorOutput.joined(separator: "\n"))")
    return try CaptureContents(path: capture)
}

/// Runs a Python peer (`python -u ARGUMENTS`) to completion (bounded); it must exit 0.
/// Its output lines, each parsed as JSON where it is.
func peerLines(_ arguments: [String], timeout: Double = 60) throws -> [PeerLine] {
    let run = try runCommand(TestEnvironment.python, ["-u"] + arguments, timeout: timeout)
    #expect(run.status == 0, "\(arguments.first ?? "peer") failed: \(run.stderr)")
    return run.stdout.split(separator: "\n").map { PeerLine(String($0)) }
}

/// One JSON line printed by a Python peer.
struct PeerLine: CustomStringConvertible {
    let raw: String
    let value: JSONValue

    init(_ raw: String) {
        self.raw = raw
        value = (try? JSONParser.parse(raw)) ?? .null
    }

    var kind: String? { value["kind"]?.stringValue }
    subscript(key: String) -> JSONValue? { value[key] }
    var description: String { raw }
}

extension [PeerLine] {
    func of(kind: String) -> [PeerLine] { filter { $0.kind == kind } }
    /// The `data` of every `received` line, as text.
    var received: [String] { of(kind: "received").compactMap { $0["data"]?.stringValue } }
}

/// A capture read back in full (the tests' captures are small), with the reader's warnings.
struct CaptureContents {
    let header: CaptureHeader
    let records: [CaptureRecord]
    let warnings: [String]

    init(path: String) throws {
        var reader = try CaptureReader(path: path)
        var records: [CaptureRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }
        header = reader.header
        self.records = records
        warnings = reader.warnings
    }

    var frames: [FrameRecord] { records.compactMap { if case .frame(let f) = $0 { f } else { nil } } }
    var faults: [FaultRecord] { records.compactMap { if case .fault(let f) = $0 { f } else { nil } } }
    var ends: [EndRecord] { records.compactMap { if case .end(let e) = $0 { e } else { nil } } }
    var upgrades: [UpgradeRecord] { records.compactMap { if case .upgrade(let u) = $0 { u } else { nil } } }
    var opens: [OpenRecord] { records.compactMap { if case .open(let o) = $0 { o } else { nil } } }
}

/// Bird/Pusher-style event text, as the Python peers send and expect it.
enum Bird {
    static func event(_ name: String, data: String = "{}", channel: String? = nil) -> String {
        var text = "{\"event\":\"\(name)\""
        if let channel { text += ",\"channel\":\"\(channel)\"" }
        return text + ",\"data\":\(data)}"
    }

    /// The event name of a JSON text, if any.
    static func name(_ text: String) -> String? {
        (try? JSONParser.parse(text))?["event"]?.stringValue
    }

    /// The decoded `data` object of an event whose data is double-encoded.
    static func data(_ text: String) -> JSONValue? {
        guard let data = (try? JSONParser.parse(text))?["data"] else { return nil }
        if let string = data.stringValue { return try? JSONParser.parse(string) }
        return data
    }
}
