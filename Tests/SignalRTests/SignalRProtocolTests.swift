import JSON
import Protocols
import ProtocolTable
import Testing
@testable import SignalR

/// The JSON hub protocol's records as the ASP.NET Core SignalR documentation spells them
/// (and pysignalr 1.3.3's `protocol/json.py` encodes them), each mapped to its kind.
@Suite struct SignalRProtocolTests {
    private func decode(_ text: String) -> RealtimeEvent? {
        var entry = SignalRProtocol()
        return entry.decode(Array(text.utf8))
    }

    @Test func theHandshakeRequestAndItsAnswers() {
        let request = decode("{\"protocol\":\"json\",\"version\":1}\u{1e}")
        #expect(request?.name == "handshake_request")
        #expect(request?.kind == .other)
        #expect(decode("{}\u{1e}")?.kind == .connectionEstablished)
        let refused = decode("{\"error\":\"Requested protocol 'xml' is not available.\"}\u{1e}")
        #expect(refused?.kind == .error)
        #expect(refused?.dataMember("error")?.stringValue == "Requested protocol 'xml' is not available.")
        // A null error is no error (the .NET server may serialize it so).
        #expect(decode("{\"error\":null}\u{1e}")?.kind == .connectionEstablished)
    }

    @Test func everyMessageTypeHasItsKind() {
        let invocation = decode("{\"type\":1,\"invocationId\":\"7\",\"target\":\"Send\",\"arguments\":[\"hi\"]}\u{1e}")
        #expect(invocation?.name == "Send")
        #expect(invocation?.kind == .other)
        #expect(invocation?.ref == "7")
        #expect(invocation?.channel == nil)
        #expect(decode("{\"type\":2,\"invocationId\":\"3\",\"item\":1}\u{1e}")?.name == "stream_item")
        #expect(decode("{\"type\":3,\"invocationId\":\"7\",\"result\":42}\u{1e}")?.kind == .other)
        let failed = decode("{\"type\":3,\"invocationId\":\"7\",\"error\":\"boom\"}\u{1e}")
        #expect(failed?.kind == .error)
        #expect(failed?.ref == "7")
        let stream = decode("{\"type\":4,\"invocationId\":\"9\",\"target\":\"Counter\",\"arguments\":[10]}\u{1e}")
        #expect(stream?.kind == .subscribe)
        #expect(stream?.name == "Counter")
        #expect(stream?.channel == "9")
        let cancel = decode("{\"type\":5,\"invocationId\":\"9\"}\u{1e}")
        #expect(cancel?.kind == .unsubscribe)
        #expect(cancel?.channel == "9")
        #expect(decode("{\"type\":6}\u{1e}")?.kind == .ping)
        #expect(decode("{\"type\":99}\u{1e}")?.name == "type 99")
    }

    @Test func aCloseWithAnErrorIsAnErrorAndKeepsAllowReconnect() {
        let final = decode("{\"type\":7,\"error\":\"Server is shutting down\"}\u{1e}")
        #expect(final?.name == "close")
        #expect(final?.kind == .error)
        #expect(final?.dataMember("allowReconnect") == nil)
        let retry = decode("{\"type\":7,\"allowReconnect\":true}\u{1e}")
        #expect(retry?.kind == .other)
        #expect(retry?.dataMember("allowReconnect") == .bool(true))
    }

    @Test func aMessageOfSeveralRecordsIsItsFirstRecord() {
        let both = decode("{}\u{1e}{\"type\":1,\"target\":\"Welcome\",\"arguments\":[]}\u{1e}")
        #expect(both?.kind == .connectionEstablished)
        let pings = decode("{\"type\":6}\u{1e}{\"type\":1,\"target\":\"Tick\",\"arguments\":[]}\u{1e}")
        #expect(pings?.kind == .ping)
    }

    @Test func escapedKeysDecodeAsTheirPlainSpelling() {
        let escaped = decode("{\"t\\u0079pe\":1,\"target\":\"Send\",\"arguments\":[]}\u{1e}")
        #expect(escaped?.name == "Send")
        #expect(decode("{\"t\\u0079pe\":6}\u{1e}")?.kind == .ping)
    }

    @Test func whatIsNoRecordDecodesToNothing() {
        #expect(decode("{\"type\":6}") == nil)  // no separator
        #expect(decode("[1,2]\u{1e}") == nil)
        #expect(decode("{\"type\":\u{1e}") == nil)
        #expect(decode("\u{1e}") == nil)
        #expect(decode("{\"event\":\"bird:ping\"}") == nil)
        #expect(decode("42[\"chat\",{}]") == nil)
    }

    @Test func detectionPicksTheEntryFromTheHandshakeRequestOnly() {
        var detector = ProtocolTable.standard.detector()
        #expect(detector.offer(upgrade: UpgradeEvidence(target: "/hub?id=abc123")) == nil)
        let choice = detector.offer(message: Array("{\"protocol\":\"json\",\"version\":1}\u{1e}".utf8))
        #expect(choice?.key == "signalr")
        #expect(choice?.reason == "a message is the SignalR handshake request (protocol json, version 1)")
        // Neither an answer nor a typed record claims: each could be answered by anything.
        #expect(SignalRProtocol.claim(message: Array("{}\u{1e}".utf8)) == nil)
        #expect(SignalRProtocol.claim(message: Array("{\"type\":6}\u{1e}".utf8)) == nil)
        #expect(SignalRProtocol.claim(message: Array("{\"protocol\":\"json\",\"version\":1}".utf8)) == nil)
        // Bird's messages stay Bird's.
        var bird = ProtocolTable.standard.detector()
        #expect(bird.offer(message: Array("{\"event\":\"pusher:connection_established\",\"data\":\"{}\"}".utf8))?.key == "bird")
    }

    @Test func theSpecEventsChooseTheEntry() {
        #expect(type(of: ProtocolTable.standard.entry(for: "signalr")).key == "signalr")
        #expect(ProtocolTable.standard.registration(named: "signalr")?.defaultSpec == "signalr")
    }

    @Test func anEventCarriedOnTheRecordIsAdoptedAsItIs() {
        var relay = SignalRProtocol()
        let carried = relay.decode(Array("{\"type\":6}\u{1e}".utf8))!
        var analyzer = SignalRProtocol()
        #expect(analyzer.adopt(carried) == carried)
    }
}
