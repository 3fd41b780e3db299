import Capture
import Faults
import JSON
import Lifecycle
import ProtocolTable
import Protocols
import Testing
import Vocabulary
import WebSocket
@testable import ProxyCore

/// docs/protocols.md's recipe followed with a toy protocol: one `WireProtocol` type, one
/// registration, a spec. Nothing else is written for it, yet detection chooses it, the
/// relay decodes with it, the faults act on its events by kind and the analyzer judges its
/// handshake and pongs.
///
/// The toy protocol speaks lines: `TOY HELLO id=ID timeout=SECONDS` (the server's
/// handshake), `TOY PING`, `TOY PONG`, `TOY JOIN CHANNEL`; its subprotocol is `toy.v1`.
struct ToyProtocol: WireProtocol {
    static let key = "toy"
    static let summary = "the toy line protocol of ToyProtocolEntryTests"
    var dialect: String? { nil }

    static func claim(upgrade: UpgradeEvidence) -> String? {
        upgrade.subprotocols.contains("toy.v1") ? "the client offered the toy.v1 subprotocol" : nil
    }

    static func claim(message payload: [UInt8]) -> String? {
        payload.starts(with: Array("TOY HELLO ".utf8)) ? "a message is a TOY HELLO" : nil
    }

    func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        let words = String(decoding: payload, as: UTF8.self).split(separator: " ").map(String.init)
        guard words.count >= 2, words[0] == "TOY" else { return nil }
        let name = words[1]
        switch name {
        case "HELLO":
            var data = JSONObject()
            for word in words.dropFirst(2) {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                if parts[0] == "id" { data["socket_id"] = .string(parts[1]) }
                if parts[0] == "timeout", let seconds = Int64(parts[1]) { data["activity_timeout"] = .int(seconds) }
            }
            return RealtimeEvent(name: name, channel: nil, data: .object(data), rawData: .object(data), kind: .connectionEstablished)
        case "PING": return RealtimeEvent(name: name, channel: nil, data: nil, rawData: nil, kind: .ping)
        case "PONG": return RealtimeEvent(name: name, channel: nil, data: nil, rawData: nil, kind: .pong)
        case "JOIN" where words.count == 3:
            return RealtimeEvent(name: name, channel: words[2], data: nil, rawData: nil, kind: .subscribe)
        default: return RealtimeEvent(name: name, channel: nil, data: nil, rawData: nil, kind: .other)
        }
    }

    func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }

    func rewriteHandshake(_ payload: [UInt8], event: RealtimeEvent, _ change: HandshakeChange) -> HandshakeRewrite? {
        guard event.kind == .connectionEstablished else { return nil }
        var id = event.socketID.map { " id=\($0)" } ?? ""
        var timeout = event.activityTimeout.map { " timeout=\(Int($0))" } ?? ""
        let previous: String?
        switch change {
        case .removeSocketID: (previous, id) = (event.socketID, "")
        case .activityTimeout(let seconds): (previous, timeout) = (event.activityTimeout.map { "\(Int($0))" }, " timeout=\(seconds)")
        }
        return HandshakeRewrite(payload: Array("TOY HELLO\(id)\(timeout)".utf8), previous: previous)
    }
}

@Suite struct ToyProtocolEntryTests {
    /// Step 2 of the recipe: one registration (here added to the standard table in the test).
    static let registration = ProtocolTable.Registration(ToyProtocol.self, defaultSpec: "bird", make: { _ in ToyProtocol() })
    static let table = ProtocolTable.standard.adding(registration)

    static func request(subprotocol: String) -> [UInt8] {
        Array(Wire.requestText.replacing("/app/key?protocol=7", with: "/toy")
            .replacing("Sec-WebSocket-Protocol: chat", with: "Sec-WebSocket-Protocol: \(subprotocol)").utf8)
    }

    @Test func detectionChoosesTheToyEntryByItsSubprotocolOrItsFirstMessage() {
        var byUpgrade = Self.table.detector()
        #expect(byUpgrade.offer(upgrade: UpgradeEvidence(target: "/toy", subprotocols: ["chat", "toy.v1"]))
                == ProtocolDetector.Choice(key: "toy", reason: "the client offered the toy.v1 subprotocol"))
        var byMessage = Self.table.detector()
        #expect(byMessage.offer(upgrade: UpgradeEvidence(target: "/toy")) == nil)
        #expect(byMessage.offer(message: Array("TOY HELLO id=1".utf8))?.key == "toy")
        // The standard table, without the registration, knows nothing of it.
        var standard = ProtocolTable.standard.detector()
        #expect(standard.offer(upgrade: UpgradeEvidence(target: "/toy", subprotocols: ["toy.v1"])) == nil)
        #expect(standard.offer(message: Array("TOY HELLO id=1".utf8)) == nil)
    }

    @Test func theRelayDecodesWithItTheFaultsActOnItsKindsAndTheAnalyzerJudgesIt() throws {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.protocolChoice = .detect(Self.table)
        let engine = FaultEngine(rules: [try FaultRule.parse("strip-socket-id"), try FaultRule.parse("stall-pongs")])
        var harness = Harness(config: config, faults: engine)
        harness.open(request: Self.request(subprotocol: "toy.v1"))

        let hello = harness.server(Wire.fromServer(.text("TOY HELLO id=s-1 timeout=30")))
        #expect(hello.notes.map(\.message) == ["protocol toy: the client offered the toy.v1 subprotocol"])
        #expect(hello.faults.map(\.detail).contains("removed socket_id s-1 from the handshake"))
        #expect(String(decoding: hello.sent(to: .client).dropFirst(2), as: UTF8.self) == "TOY HELLO timeout=30")
        let injected = try #require(hello.frameRecords.first { $0.action == .injected })
        #expect(injected.decoded.event?.kind == .connectionEstablished && injected.decoded.event?.socketID == nil)

        harness.client(Wire.fromClient(.text("TOY PING")))
        let pong = harness.server(Wire.fromServer(.text("TOY PONG")))
        #expect(pong.frameRecords.map(\.action) == [.dropped] && pong.sent(to: .client).isEmpty)

        // The analyzer, with the spec the registration names, reads the same kinds: from the
        // records as the relay made them, and from the payloads alone (a capture file).
        let records = harness.log.compactMap { command -> CaptureRecord? in
            if case .record(let record) = command { record } else { nil }
        }
        let fromFile = records.map { record -> CaptureRecord in
            guard case .frame(var frame) = record else { return record }
            frame.decoded = .notDecoded
            return .frame(frame)
        }
        for input in [records, fromFile] {
            var options = AnalyzerOptions(spec: try SpecLoader.load(Self.registration.defaultSpec))
            options.entry = Self.registration
            options.spec.stale?.pongTimeout = 1_000_000
            var analyzer = LiveAnalyzer(options: options)
            var findings: [Finding] = []
            for record in input {
                for case .finding(let finding) in analyzer.feed(record) { findings.append(finding) }
            }
            for case .finding(let finding) in analyzer.finish(at: harness.now + 5_000_000) { findings.append(finding) }
            #expect(findings.map(\.rule).contains("server.handshake-missing-id"), "\(findings)")
            #expect(findings.map(\.rule).contains("server.pong-missing"), "\(findings)")
        }
    }
}
