import Capture
import Foundation
import Glibc
import Testing
import TestSupport

/// `faultline proxy --forward` recording to a fresh capture, with `arguments` added; the
/// real clients (curl, Python `websockets`, Chromium) point at `proxyURL`. Killed with
/// SIGKILL at the end unless stopped.
final class ForwardRig {
    let proxy: ChildProcess
    let port: Int
    let capturePath: String
    let directory: URL

    init(_ arguments: [String]) throws {
        directory = TestEnvironment.temporaryDirectory("faultline-forward")
        capturePath = directory.appendingPathComponent("capture.jsonl").path
        proxy = try ChildProcess.faultline(["proxy", "--forward", "--listen", "127.0.0.1:0", "--record", capturePath] + arguments)
        port = try listeningPort(of: proxy, "the forward proxy")
    }

    var proxyURL: String { "http://127.0.0.1:\(port)" }

    /// SIGINT (exit 0 expected), then the capture's records.
    func stop() throws -> CaptureContents { try stopRecordingProxy(proxy, capture: capturePath) }

    /// Runs tls_ws_client.py through the proxy (CONNECT) and returns its lines.
    func websocketClient(_ url: String, ca: String? = nil, _ arguments: [String]) throws -> [PeerLine] {
        try peerLines([TLSProxyRig.clientScript, url, "--proxy", proxyURL] + (ca.map { ["--ca", $0] } ?? []) + arguments)
    }

    deinit { proxy.stop() }
}

/// A Python peer server printing `READY <port>`: the WebSocket echo servers of Tests/Peers.
final class ReadyServer {
    let process: ChildProcess
    let port: Int

    init(_ script: String, _ arguments: [String] = []) throws {
        process = try ChildProcess.python(TestEnvironment.path("Tests/Peers/\(script)"), arguments)
        let ready = try #require(process.waitForLine(timeout: 20) { $0.hasPrefix("READY ") },
                                 "\(script) did not start: \(process.errorOutput.joined(separator: "\n"))")
        port = try #require(Int(ready.dropFirst(6)))
    }

    deinit { process.stop() }
}

/// curl's WebSocket upgrade request (curl 7.88 has no ws:// support of its own). `-v`
/// prints the heads on standard error as they come (standard output is buffered until the
/// WebSocket ends); curl is stopped once the 101 has been seen, since it would wait on the
/// open WebSocket forever. Returns the response head lines (`< ...`, the proxy's own
/// CONNECT answer first when there is one).
func curlUpgrade(_ arguments: [String]) throws -> [String] {
    let curl = try ChildProcess("/usr/bin/curl", ["-sS", "-v", "--http1.1", "-o", "/dev/null",
                                                  "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                                                  "-H", "Sec-WebSocket-Version: 13",
                                                  "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="] + arguments)
    let switched = curl.waitForLine(timeout: 30, stderr: true) { $0.hasPrefix("< HTTP/1.1 101") }
    curl.stop()
    #expect(switched != nil, "curl \(arguments): no 101; stderr: \(curl.errorOutput)")
    return curl.errorOutput.filter { $0.hasPrefix("< HTTP/") }
}

extension CaptureContents {
    var tunnels: [TunnelRecord] { records.compactMap { if case .tunnel(let t) = $0 { t } else { nil } } }
    var exchanges: [HTTPRecord] { records.compactMap { if case .http(let h) = $0 { h } else { nil } } }
    var notes: [NoteRecord] { records.compactMap { if case .note(let n) = $0 { n } else { nil } } }
}
