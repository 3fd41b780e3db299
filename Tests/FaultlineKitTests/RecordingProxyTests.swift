@testable import FaultlineKit
import Foundation
import Synchronization
import Testing
import TestSupport
import WebSocket

/// FaultlineKit as a client test suite uses it: a recording proxy with fault rules on an
/// ephemeral port, a client through it, findings in memory; no subprocess, no file read.
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

    @Test func aClientWithAFixedRetryDelayGetsAFindingInMemory() async throws {
        let path = Self.capturePath("fixed-delay.jsonl")
        // The policy the client promises, in a spec file (the built-in `websocket` spec
        // assumes none): full jitter in [0, 30 s]. A fixed retry is no jitter whatever the
        // machine's load adds to it: delays of up to a few seconds are not spread over 30 s.
        let spec = Self.capturePath("jittered-backoff.json")
        let promised = #"""
            {"name": "jittered", "events": "connection", "connectedOn": "upgrade",
             "states": {"initial": "initialized", "connecting": "connecting", "connected": "connected",
                        "disconnected": "disconnected", "failed": "failed"},
             "backoff": {"phases": [{"base": 30, "cap": 30, "jitter": "full", "state": "unavailable"}]},
             "rules": ["backoff.jitter"]}
            """#
        #expect(FileManager.default.createFile(atPath: spec, contents: Data(promised.utf8)))
        let proxy = try await RecordingProxy.start(upstream: .simulatedServer,
                                                   faults: [.close(code: 1011, after: .milliseconds(50))],
                                                   spec: spec, recordingTo: path)
        #expect(proxy.url == "ws://127.0.0.1:\(proxy.port)")
        #expect(proxy.upstreamURL.hasPrefix("ws://127.0.0.1:"))
        for attempt in 0..<9 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(20)) }   // the client's fixed retry delay
            #expect(try Self.connectOnce(port: proxy.port))
        }
        let recording = await proxy.stop()
        #expect(recording.problems.isEmpty, "\(recording.problems)")
        #expect(recording.spec == spec && recording.path == path)
        let jitter = try #require(recording.findings.first { $0.rule == "backoff.jitter" }, "findings: \(recording.findings)")
        #expect(jitter.severity == .warning)
        // The built-in `websocket` spec assumes no reconnect policy: no backoff finding there.
        #expect(try recording.findings(spec: "websocket").allSatisfy { !$0.rule.hasPrefix("backoff.") })
        #expect(jitter.client == "client-1")
        #expect(jitter.connection > 1 && jitter.time > .zero)
        #expect(!jitter.evidence.isEmpty && jitter.evidence.allSatisfy { $0.time <= jitter.time }, "\(jitter.evidence)")
        // The live analysis and `faultline analyze` on the file agree.
        #expect(try recording.findings(spec: spec).map(\.rule) == recording.findings.map(\.rule))
        // Stopping again only returns the same recording.
        #expect(await proxy.stop() == recording)
    }

    @Test func aCleanSessionHasNoFindingsAndNeedsNoFile() async throws {
        let proxy = try await RecordingProxy.start(upstream: .simulatedServer, spec: "websocket")
        #expect(proxy.recordingPath == nil)
        let socket = try RawSocket(port: proxy.port, receiveTimeout: 10)
        socket.send(Array(("GET /app/sim-key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        #expect(String(decoding: socket.readHead(), as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        let recording = await proxy.stop()
        #expect(recording.findings.isEmpty, "\(recording.findings)")
        #expect(recording.path == nil)
        #expect { _ = try recording.findings(spec: "websocket") } throws: { "\($0)".contains("recorded to no file") }
    }

    @Test func theSpecJudgesAsTheTrafficPasses() async throws {
        // The Bird spec expects a handshake with a socket id: stripping it is a server finding.
        let proxy = try await RecordingProxy.start(upstream: .simulatedServer, faults: [.stripSocketID()])
        let socket = try RawSocket(port: proxy.port, receiveTimeout: 10)
        socket.send(Array(("GET /app/sim-key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        #expect(String(decoding: socket.readHead(), as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        var decoder = FrameDecoder()
        decoder.append(socket.readSome())
        #expect(try decoder.next()?.opcode == .text, "the handshake, without its socket id")
        let recording = await proxy.stop()
        let finding = try #require(recording.findings.first { $0.rule == "server.handshake-missing-id" },
                                   "findings: \(recording.findings)")
        #expect(finding.severity == .error && recording.errors.contains(finding))
        #expect(finding.causedByFault == "strip-socket-id")
    }

    @Test func aBadRuleSpecURLOrFileIsAThrownError() async throws {
        await #expect { _ = try await RecordingProxy.start(upstream: .simulatedServer, faults: ["explode:now"]) }
            throws: { "\($0)".contains("fault rule 'explode:now'") }
        await #expect { _ = try await RecordingProxy.start(upstream: .url("http://example.com")) }
            throws: { "\($0)".contains("upstream http://example.com") }
        await #expect { _ = try await RecordingProxy.start(upstream: .simulatedServer, spec: "no-such-spec") }
            throws: { "\($0)".contains("spec no-such-spec") }
        await #expect { _ = try await RecordingProxy.start(upstream: .simulatedServer, recordingTo: "/nonexistent-dir/x.jsonl") }
            throws: { "\($0)".contains("/nonexistent-dir/x.jsonl") }
        let proxy = try await RecordingProxy.start(upstream: .simulatedServer, recordingTo: Self.capturePath("spec.jsonl"))
        let recording = await proxy.stop()
        #expect { _ = try recording.findings(spec: "no-such-spec") } throws: { "\($0)".contains("spec no-such-spec") }
    }

    /// Set once, read from any thread.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test func aProxyDroppedWithoutStopStopsWithoutBlocking() async throws {
        var proxy: RecordingProxy? = try await RecordingProxy.start(upstream: .simulatedServer)
        let port = try #require(proxy?.port)
        let finished = try #require(proxy?.finished)
        proxy = nil
        // Dropping it asks its loop thread to wind down, and nothing waits for that; the
        // thread hands the recording over once it has (a bounded wait on that event, not
        // on a port that another test's listener may take next).
        let wound = Flag()
        Task { _ = await finished.value(); wound.set() }
        let deadline = Date().addingTimeInterval(60)
        while !wound.isSet, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(wound.isSet, "the dropped proxy's loop thread did not wind down within 60 s")
        // Its listener was closed before the recording was handed over.
        #expect((try? RawSocket(port: port, receiveTimeout: 1)) == nil)
    }
}
