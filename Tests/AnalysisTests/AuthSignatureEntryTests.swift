import Analysis
import Capture
import JSON
import Lifecycle
import ProtocolTable
import Protocols
import Testing
import Vocabulary
import WebSocket

/// `channels.auth-signature` asks the entry the run judges the client with how its auth is
/// signed: a registered entry (`AnalyzerOptions.entry`), and in a mixed input each client's
/// own pack, never the entry the spec's `events` names.
@Suite struct AuthSignatureEntryTests {
    /// A line protocol that signs its own way: `HELLO ID` (the server's handshake),
    /// `SUB CHANNEL AUTH` (a subscribe), where AUTH is `SECRET/ID/CHANNEL`. Bird's HMAC
    /// check would call every one of its signatures wrong.
    struct SignedLines: WireProtocol {
        static let key = "signed-lines"
        static let summary = "a test's line protocol with its own auth"
        var dialect: String? { nil }

        static func claim(upgrade: UpgradeEvidence) -> String? {
            upgrade.path == "/signed-lines" ? "the path is /signed-lines" : nil
        }

        func decode(_ payload: [UInt8]) -> RealtimeEvent? {
            let words = String(decoding: payload, as: UTF8.self).split(separator: " ").map(String.init)
            switch (words.first, words.count) {
            case ("HELLO", 2):
                let data = JSONValue.object(["socket_id": .string(words[1])])
                return RealtimeEvent(name: "HELLO", channel: nil, data: data, rawData: data, kind: .connectionEstablished)
            case ("SUB", 3):
                let data = JSONValue.object(["channel": .string(words[1]), "auth": .string(words[2])])
                return RealtimeEvent(name: "SUB", channel: words[1], data: data, rawData: data, kind: .subscribe)
            default:
                return nil
            }
        }

        func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }

        func checkAuth(of event: RealtimeEvent, socketID: String, secret: String) -> AuthCheck? {
            guard event.kind == .subscribe, let auth = event.auth, let channel = event.targetChannel else { return nil }
            return AuthCheck(what: "subscribe \(channel)", auth: auth, valid: auth == "\(secret)/\(socketID)/\(channel)")
        }
    }

    static let secret = "s3cret"
    static let registration = ProtocolTable.Registration(SignedLines.self, defaultSpec: "signed-lines",
                                                         make: { _ in SignedLines() })
    static let table = ProtocolTable.standard.adding(registration)

    /// The entry's spec: Bird's rules (auth-signature among them) under another name.
    static func spec(_ name: String) -> LifecycleSpec? {
        guard var spec = try? SpecLoader.load("bird") else { return nil }
        if name == registration.defaultSpec { spec.name = name }
        return spec
    }

    static func open(_ conn: ConnectionID, at t: Micros, path: String) -> [CaptureRecord] {
        [.open(OpenRecord(conn: conn, t: t, client: "127.0.0.1:\(5000 + Int(conn))", server: "127.0.0.1:6000")),
         .upgrade(UpgradeRecord(conn: conn, t: t + 100, from: .client, method: "GET", target: path, headers: [])),
         .upgrade(UpgradeRecord(conn: conn, t: t + 200, from: .server, status: 101, reason: "Switching Protocols", headers: []))]
    }

    static func text(_ conn: ConnectionID, at t: Micros, _ text: String, from: Side) -> CaptureRecord {
        .frame(FrameRecord(conn: conn, t: t, from: from, opcode: .text, masked: from == .client, payload: Array(text.utf8)))
    }

    /// A signed-lines client: one subscribe signed its entry's way, one signed wrong.
    static func signedLinesClient(_ conn: ConnectionID, at t: Micros) -> [CaptureRecord] {
        open(conn, at: t, path: "/signed-lines") + [
            text(conn, at: t + 1_000, "HELLO s-\(conn)", from: .server),
            text(conn, at: t + 2_000, "SUB private-good \(secret)/s-\(conn)/private-good", from: .client),
            text(conn, at: t + 3_000, "SUB private-bad \(secret)/s-0/private-bad", from: .client),
        ]
    }

    static func authFindings(_ events: [AnalysisEvent]) -> [String] {
        events.compactMap { event in
            guard case .finding(let finding) = event, finding.rule == ChannelsAuthSignature.id else { return nil }
            return "\(finding.client): \(finding.message)"
        }
    }

    @Test func aRegisteredEntryChecksItsOwnSignatures() throws {
        var options = AnalyzerOptions(spec: try #require(Self.spec(Self.registration.defaultSpec)), appSecret: Self.secret)
        options.entry = Self.registration
        var analyzer = LiveAnalyzer(options: options)
        var events: [AnalysisEvent] = []
        for record in Self.signedLinesClient(1, at: 0) { events += analyzer.feed(record) }
        analyzer.finish(at: 10_000) { events += $0 }
        // Bird's HMAC would have called both wrong; the entry's own check finds the one.
        #expect(Self.authFindings(events) == ["client-1: subscribe private-bad: auth is not the signature for socket id s-1"])
    }

    @Test func eachClientOfAMixedInputIsCheckedByItsOwnPack() throws {
        let base = AnalyzerOptions(spec: try #require(Self.spec("bird")), appSecret: Self.secret)
        let specs = ClientSpecs(fallback: base, table: Self.table, load: Self.spec)
        var records = Self.open(1, at: 0, path: "/app/key?protocol=7") + [
            Self.text(1, at: 1_000, #"{"event":"pusher:connection_established","data":"{\"socket_id\":\"1.2\"}"}"#, from: .server),
            Self.text(1, at: 2_000, #"{"event":"pusher:subscribe","data":{"channel":"private-x","auth":"key:00"}}"#, from: .client),
        ]
        records += Self.signedLinesClient(2, at: 20_000)
        var analyzer = SpecPerClientAnalyzer(specs: specs)
        var events: [AnalysisEvent] = []
        for record in records { analyzer.feed(record) { found, _, _ in events += found } }
        analyzer.finish(at: 100_000) { found, _, _ in events += found }
        #expect(analyzer.specNumbers.map { specs.name(Int($0)) } == ["bird", "signed-lines"])
        // The Pusher client's HMAC is wrong by Bird's check; the signed-lines client is
        // judged by its entry, which decodes its messages and checks its signatures.
        #expect(Self.authFindings(events) == [
            "client-1: subscribe private-x: auth is not the signature for socket id 1.2",
            "client-2: subscribe private-bad: auth is not the signature for socket id s-2",
        ])
    }
}
