import Testing
import Capture
import WebSocket
@testable import Pcap

/// Whole pcaps built in code, read back as capture records.
@Suite struct PcapRecordSourceTests {
    static func records(_ builder: PcapBuilder) throws -> (records: [CaptureRecord], warnings: [String], header: CaptureHeader) {
        var source = try PcapRecordSource(path: try builder.write(), filter: nil, tool: "faultline test")
        var records: [CaptureRecord] = []
        while let r = try source.next() { records.append(r) }
        return (records, source.warnings, source.header)
    }

    static func frames(_ records: [CaptureRecord]) -> [FrameRecord] {
        records.compactMap { if case .frame(let f) = $0 { f } else { nil } }
    }

    static func notes(_ records: [CaptureRecord]) -> [String] {
        records.compactMap { if case .note(let n) = $0 { n.message } else { nil } }
    }

    @Test func fullConnectionBecomesTheProxysRecords() throws {
        let b = PcapBuilder(link: .null)
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        c.text(fromClient: true, "{\"event\":\"pusher:subscribe\"}")
        c.text(fromClient: false, "{\"event\":\"pusher_internal:subscription_succeeded\"}")
        c.send(fromClient: false, Conversation.frame(fromClient: false, .close, [0x0F, 0xA9] + Array("bye".utf8)))
        c.send(fromClient: false, [], flags: [.ack, .fin])
        c.send(fromClient: true, [], flags: [.rst])
        let (records, warnings, header) = try Self.records(b)
        #expect(warnings.isEmpty)
        #expect(header.source == "pcap")
        #expect(header.startedAt == 1_700_000_000_001_000)
        guard case .open(let open) = records.first else { Issue.record("no open record first: \(records)"); return }
        #expect(open.conn == 1)
        #expect(open.t == 0)
        #expect(open.client == "127.0.0.1:50000")
        #expect(open.server == "127.0.0.2:9001")
        let upgrades = records.compactMap { if case .upgrade(let u) = $0 { u } else { nil } }
        #expect(upgrades.map(\.from) == [.client, .server])
        #expect(upgrades.first?.target == "/app/key?protocol=7")
        #expect(upgrades.last?.status == 101)
        let frames = Self.frames(records)
        #expect(frames.map(\.from) == [.client, .server, .server])
        #expect(frames.first?.text == "{\"event\":\"pusher:subscribe\"}")
        #expect(frames.first?.masked == true)
        #expect(frames.allSatisfy { $0.action == .observed })
        #expect(frames.last?.closeCode == 4009)
        #expect(frames.last?.closeReason == "bye")
        let ends = records.compactMap { if case .end(let e) = $0 { e } else { nil } }
        #expect(ends.map(\.side) == [.server, .client])
        #expect(ends.map(\.kind) == [.fin, .rst])
        // Times are microseconds from the first packet, in order.
        let times = records.compactMap(\.time)
        #expect(times == times.sorted())
    }

    @Test func permessageDeflateIsInflatedPerDirection() throws {
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.upgrade(extensions: "permessage-deflate")
        let clientDeflater = MessageDeflater(windowBits: 15, noContextTakeover: false)
        let serverDeflater = MessageDeflater(windowBits: 15, noContextTakeover: false)
        let messages = ["{\"event\":\"a\",\"data\":\"hello hello hello\"}", "{\"event\":\"a\",\"data\":\"hello hello hello\"}"]
        for m in messages {
            c.send(fromClient: true, Conversation.frame(fromClient: true, .text, clientDeflater.deflate(Array(m.utf8)), rsv1: true))
        }
        // A fragmented compressed message from the server.
        let deflated = serverDeflater.deflate(Array("fragmented and compressed".utf8))
        c.send(fromClient: false, Conversation.frame(fromClient: false, .text, Array(deflated[..<4]), fin: false, rsv1: true))
        c.send(fromClient: false, Conversation.frame(fromClient: false, .continuation, Array(deflated[4...])))
        // Garbage that cannot inflate: reported, and the stream goes on.
        c.send(fromClient: false, Conversation.frame(fromClient: false, .text, [0xFF, 0xFF, 0xFF], rsv1: true))
        c.text(fromClient: false, "plain")
        let (records, _, _) = try Self.records(b)
        let frames = Self.frames(records)
        #expect(frames.count == 6)
        #expect(frames[0].text == messages[0])
        #expect(frames[1].text == messages[1])
        #expect(frames[0].compressed && frames[1].compressed)
        // Context takeover: the second copy compresses to fewer bytes and still inflates.
        #expect(frames[1].length < frames[0].length)
        #expect(frames[2].payload.isEmpty && frames[2].compressed)
        #expect(frames[3].text == "fragmented and compressed")
        #expect(frames[3].length == deflated.count - 4)
        #expect(!frames[4].compressed && frames[4].payload == [0xFF, 0xFF, 0xFF])
        #expect(Self.notes(records).contains { $0.contains("could not inflate") })
        #expect(frames[5].text == "plain" && !frames[5].compressed)
    }

    @Test func midConnectionStartPicksUpAtAProvenBoundary() throws {
        let b = PcapBuilder()
        let c = Conversation(b)
        // No SYN, no upgrade: the capture starts with the tail of a server frame.
        let big = Conversation.frame(fromClient: false, .text, Array(repeating: 0x61, count: 300))
        c.send(fromClient: false, Array(big[100...]))
        c.text(fromClient: false, "{\"event\":\"one\"}")
        c.text(fromClient: false, "{\"event\":\"two\"}")
        c.text(fromClient: true, "{\"event\":\"three\"}")
        c.text(fromClient: false, "{\"event\":\"four\"}")
        let (records, _, _) = try Self.records(b)
        guard case .open(let open) = records.first else { Issue.record("no open: \(records)"); return }
        // The masked direction is the client.
        #expect(open.client == "127.0.0.1:50000")
        let frames = Self.frames(records)
        #expect(frames.map { $0.text ?? "?" } == ["{\"event\":\"one\"}", "{\"event\":\"two\"}", "{\"event\":\"three\"}", "{\"event\":\"four\"}"]
                || frames.map { $0.text ?? "?" } == ["{\"event\":\"two\"}", "{\"event\":\"three\"}", "{\"event\":\"four\"}"])
        #expect(Self.notes(records).contains { $0.contains("mid-connection") })
    }

    @Test func lostSegmentIsReportedAndFramesResume() throws {
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        c.text(fromClient: false, "{\"event\":\"before\"}")
        // A two-segment frame whose first segment the capture lost.
        let frame = Conversation.frame(fromClient: false, .text, Array(repeating: 0x62, count: 200))
        _ = c.packet(fromClient: false, Array(frame[..<120]))   // never added
        c.send(fromClient: false, Array(frame[120...]))
        c.text(fromClient: false, "{\"event\":\"after\"}")
        // The client acknowledges everything: the hole is proven lost.
        c.send(fromClient: true, [], flags: [.ack])
        c.text(fromClient: false, "{\"event\":\"later\"}")
        let (records, _, _) = try Self.records(b)
        let texts = Self.frames(records).compactMap(\.text)
        #expect(texts.first == "{\"event\":\"before\"}")
        #expect(texts.contains("{\"event\":\"later\"}"))
        #expect(!texts.contains { $0.hasPrefix("bbb") })  // never half a frame
        let notes = Self.notes(records)
        #expect(notes.contains { $0.contains("120 bytes missing from the capture") })
        #expect(notes.contains { $0.contains("frames picked up at a proven frame boundary") })
    }

    @Test func connectionIdsFollowOrderAndOtherTrafficIsIgnored() throws {
        let b = PcapBuilder()
        let http = Conversation(b, clientPort: 40000, serverPort: 80)
        let first = Conversation(b, clientPort: 40001)
        let second = Conversation(b, clientPort: 40002, serverPort: 443)
        http.handshake()
        http.send(fromClient: true, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        http.send(fromClient: false, Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
        first.handshake()
        second.handshake()
        first.upgrade()
        second.upgrade()
        second.text(fromClient: true, "2")
        first.text(fromClient: true, "1")
        let (records, _, _) = try Self.records(b)
        let opens = records.compactMap { if case .open(let o) = $0 { o } else { nil } }
        #expect(opens.map(\.client) == ["127.0.0.1:40001", "127.0.0.1:40002"])
        #expect(opens.map(\.conn) == [1, 2])
        let frames = Self.frames(records)
        #expect(frames.map { "\($0.conn):\($0.text ?? "")" } == ["2:2", "1:1"])
        // Still open at the end of the capture.
        let ends = records.compactMap { if case .end(let e) = $0 { e } else { nil } }
        #expect(ends.count == 4 && ends.allSatisfy { $0.kind == .captureEnd })
    }

    @Test func refusedUpgradeIsRecordedAndNotDecodedFurther() throws {
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.send(fromClient: true, Array("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8))
        c.send(fromClient: false, Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".utf8))
        let (records, _, _) = try Self.records(b)
        let upgrades = records.compactMap { if case .upgrade(let u) = $0 { u } else { nil } }
        #expect(upgrades.last?.status == 403)
        #expect(Self.frames(records).isEmpty)
    }

    @Test func fragmentsAndSnaplenCutsAreWarned() throws {
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        var fragment = c.packet(fromClient: false, [1, 2, 3])
        fragment[6] = 0x20  // more fragments
        PacketBuilder.put16(&fragment, 10, 0)
        b.add(fragment)
        let whole = c.packet(fromClient: false, Conversation.frame(fromClient: false, .text, Array(repeating: 0x63, count: 100)))
        b.add(Array(whole[..<60]), wireLength: whole.count)
        c.text(fromClient: false, "{\"event\":\"after-cut\"}")
        let (records, warnings, _) = try Self.records(b)
        #expect(warnings.contains { $0.contains("1 IP fragments ignored") })
        #expect(warnings.contains { $0.contains("cut by the snapshot length") })
        #expect(Self.notes(records).contains { $0.contains("cut by the snapshot length") })
        #expect(Self.frames(records).last?.text == "{\"event\":\"after-cut\"}")
    }

    @Test func closedAndNonWebSocketFlowsAreForgotten() throws {
        let b = PcapBuilder()
        for i in 0..<50 {
            let http = Conversation(b, clientPort: UInt16(30000 + i), serverPort: 80)
            http.handshake()
            http.send(fromClient: true, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            http.send(fromClient: false, Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
            http.send(fromClient: false, [], flags: [.ack, .fin])
            http.send(fromClient: true, [], flags: [.ack, .fin])
        }
        let ws = Conversation(b, clientPort: 40000)
        ws.handshake()
        ws.upgrade()
        // More traffic than one decoding batch, so the capture has not ended (and every
        // flow been flushed) by the time the open record is read.
        for n in 0..<(2 * PacketBatch.capacity) { ws.text(fromClient: false, "{\"event\":\"e\(n)\"}") }
        var source = try PcapRecordSource(path: try b.write(), tool: "test")
        guard case .open(let open) = try source.next() else { Issue.record("expected the WebSocket open"); return }
        #expect(open.conn == 1)
        #expect(source.trackedFlows == 1)
    }

    @Test func ipv6ConnectionWithWrappingSequenceNumbers() throws {
        let b = PcapBuilder()
        let c = Conversation(b, clientISN: 0xFFFF_FF00, serverISN: 0xFFFF_FFF0, ipv6: true)
        c.handshake()
        c.upgrade()
        for i in 0..<5 { c.text(fromClient: i % 2 == 0, "{\"event\":\"e\(i)\"}") }
        let (records, _, _) = try Self.records(b)
        guard case .open(let open) = records.first else { Issue.record("no open"); return }
        #expect(open.client == "[2001:db8::1]:50000")
        #expect(open.server == "[2001:db8::2]:9001")
        #expect(Self.frames(records).compactMap(\.text) == (0..<5).map { "{\"event\":\"e\($0)\"}" })
    }

    @Test func magicNumbers() {
        #expect(PcapMagic.matches([0xD4, 0xC3, 0xB2, 0xA1, 2, 0]))
        #expect(PcapMagic.matches([0x4D, 0x3C, 0xB2, 0xA1]))
        #expect(PcapMagic.matches([0x0A, 0x0D, 0x0D, 0x0A, 0x1C]))
        #expect(!PcapMagic.matches(Array("{\"type\":\"header\"".utf8)))
        #expect(!PcapMagic.matches([0xD4, 0xC3]))
    }
}
