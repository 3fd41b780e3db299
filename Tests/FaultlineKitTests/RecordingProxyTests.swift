import FaultlineKit
import Foundation
import Testing
import TestSupport
import WebSocket

/// FaultlineKit as a client test suite uses it: a recording proxy with fault rules on an
/// ephemeral port, a client through it, findings from the recording; no subprocess.
@Suite struct RecordingProxyTests {
    /// One client connection through the proxy: the upgrade, frames until the proxy's (or
    /// the server's) close, which is answered; true when it was upgraded.
    static func connectOnce(port: Int) throws -> Bool {
        let socket = try RawSocket(port: port, receiveTimeout: 10)
        socket.send(Array(("GET /app/sim-key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "User-Agent: fixed-delay-client\r\n\r\n").utf8))
        guard String(decoding: socket.readHead(), as: UTF8.self).hasPrefix("HTTP/1.1 101") else { return false }
        var decoder = FrameDecoder()
        while true {
            if let frame = try decoder.next() {
                guard frame.opcode == .close else { continue }
                let mask: [UInt8] = [1, 2, 3, 4]
                let code = Array(frame.payload.prefix(2))
                socket.send([0x88, 0x80 | UInt8(code.count)] + mask + code.enumerated().map { $0.element ^ mask[$0.offset] })
                _ = socket.readToEnd()
                return true
            }
            let bytes = socket.readSome()
            if bytes.isEmpty { return true }
            decoder.append(bytes)
        }
    }

    static func capturePath(_ name: String) -> String {
        TestEnvironment.temporaryDirectory("faultlinekit").appendingPathComponent(name).path
    }

    @Test func aClientWithAFixedRetryDelayGetsAFinding() throws {
        let proxy = try RecordingProxy.start(upstream: .simulatedServer, faults: ["close:1011,after=50ms"],
                                             recordingTo: Self.capturePath("fixed-delay.jsonl"))
        #expect(proxy.url == "ws://127.0.0.1:\(proxy.port)")
        #expect(proxy.upstreamURL.hasPrefix("ws://127.0.0.1:"))
        for attempt in 0..<9 {
            if attempt > 0 { usleep(20_000) }
            #expect(try Self.connectOnce(port: proxy.port))
        }
        let recording = proxy.stop()
        // The built-in `websocket` spec assumes no policy: the one promised is in a spec file.
        let spec = Self.capturePath("jittered-backoff.json")
        let promised = #"""
            {"name": "jittered", "events": "connection", "connectedOn": "upgrade",
             "states": {"initial": "initialized", "connecting": "connecting", "connected": "connected",
                        "disconnected": "disconnected", "failed": "failed"},
             "backoff": {"phases": [{"base": 1, "cap": 30, "jitter": "full", "state": "unavailable"}]},
             "rules": ["backoff.jitter"]}
            """#
        #expect(FileManager.default.createFile(atPath: spec, contents: Data(promised.utf8)))
        #expect(try recording.findings(spec: "websocket").allSatisfy { !$0.rule.hasPrefix("backoff.") })
        let findings = try recording.findings(spec: spec)
        let jitter = try #require(findings.first { $0.rule == "backoff.jitter" }, "findings: \(findings)")
        #expect(jitter.severity == "warning")
        #expect(jitter.client == "client-1")
        // Stopping again only returns the same recording.
        #expect(proxy.stop() == recording)
    }

    @Test func aCleanSessionHasNoFindings() throws {
        let proxy = try RecordingProxy.start(upstream: .simulatedServer, recordingTo: Self.capturePath("clean.jsonl"))
        let socket = try RawSocket(port: proxy.port, receiveTimeout: 10)
        socket.send(Array(("GET /app/sim-key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        #expect(String(decoding: socket.readHead(), as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        let recording = proxy.stop()
        let text = try String(contentsOfFile: recording.path, encoding: .utf8)
        #expect(text.contains("\"upgrade\""))
        #expect(try recording.findings(spec: "websocket").isEmpty)
    }

    @Test func aBadRuleOrSpecIsAClearError() throws {
        #expect {
            _ = try RecordingProxy.start(upstream: .simulatedServer, faults: ["explode:now"],
                                         recordingTo: Self.capturePath("never.jsonl"))
        } throws: { error in
            "\(error)".contains("fault rule 'explode:now'")
        }
        #expect {
            _ = try RecordingProxy.start(upstream: .url("http://example.com"), recordingTo: Self.capturePath("never.jsonl"))
        } throws: { error in
            "\(error)".contains("upstream http://example.com")
        }
        let proxy = try RecordingProxy.start(upstream: .simulatedServer, recordingTo: Self.capturePath("spec.jsonl"))
        #expect {
            _ = try proxy.stop().findings(spec: "no-such-spec")
        } throws: { error in
            "\(error)".contains("spec no-such-spec")
        }
    }
}
