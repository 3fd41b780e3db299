import Foundation
import Testing
import Capture
import TestSupport
import WebSocket
@testable import Pcap

/// Pcaps made to break the reader (issue 15, items 3, 14 and 15).
@Suite struct HostileFileTests {
    /// A conversation with a few frames each way, as a builder.
    static func conversation(frames: Int = 3) -> PcapBuilder {
        let b = PcapBuilder(link: .raw)
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        for i in 0..<frames {
            c.text(fromClient: true, "{\"event\":\"bird:ping\",\"n\":\(i)}")
            c.text(fromClient: false, "{\"event\":\"bird:pong\",\"n\":\(i)}")
        }
        return b
    }

    /// The builder's packets as pcapng (LINKTYPE_RAW, microsecond timestamps), with the
    /// timestamps of some packets replaced.
    static func pcapng(_ b: PcapBuilder, timestamps: [Int: UInt64] = [:]) throws -> String {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        func block(_ type: UInt32, _ body: [UInt8]) {
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            u32(type); u32(UInt32(padded.count + 12)); out += padded; u32(UInt32(padded.count + 12))
        }
        var shb: [UInt8] = []
        withUnsafeBytes(of: UInt32(0x1A2B_3C4D).littleEndian) { shb += $0 }
        shb += [1, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8)
        block(0x0A0D_0D0A, shb)
        block(1, [101, 0, 0, 0, 0xFF, 0xFF, 0, 0])
        for (i, p) in b.packets.enumerated() {
            let ts = timestamps[i] ?? UInt64(p.time)
            var body: [UInt8] = []
            for v in [UInt32(0), UInt32(ts >> 32), UInt32(ts & 0xFFFF_FFFF), UInt32(p.bytes.count), UInt32(p.bytes.count)] {
                withUnsafeBytes(of: v.littleEndian) { body += $0 }
            }
            block(6, body + p.bytes)
        }
        let path = TestEnvironment.temporaryDirectory("pcapng-build").appendingPathComponent("built.pcapng").path
        try Data(out).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func readAll(_ path: String) throws -> (records: [CaptureRecord], warnings: [String]) {
        var source = try PcapRecordSource(path: path, filter: nil, tool: "faultline test")
        var records: [CaptureRecord] = []
        while let r = try source.next() { records.append(r) }
        return (records, source.warnings)
    }

    /// A pcapng timestamp of 2^63 us (or 2^64 - 1) trapped the seconds-to-micros
    /// multiplication. Such packets are skipped with a warning naming the first.
    @Test func timestampBeyondInt64IsSkippedWithAWarning() throws {
        let b = Self.conversation()
        let last = b.packets.count - 1
        let path = try Self.pcapng(b, timestamps: [last: 1 << 63, last - 1: UInt64.max])
        let (records, warnings) = try Self.readAll(path)
        #expect(warnings.contains("2 packets skipped: timestamp negative or beyond year 146,000 (first: packet \(last))"))
        #expect(PcapRecordSourceTests.frames(records).count == 4)
        // The same file with good times: every frame.
        #expect(PcapRecordSourceTests.frames(try Self.readAll(try Self.pcapng(b)).records).count == 6)
    }

    /// A record header with caplen 0xFFFFFFFF at packet 3 was taken for a torn tail: a
    /// warning, exit 0, the rest of the file silently unread. It is an error naming the
    /// packet, the offset and how much was left.
    @Test func corruptRecordHeaderMidFileIsAnError() throws {
        let b = Self.conversation(frames: 20)
        let path = try b.write()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let headerAt = 24 + (16 + b.packets[0].bytes.count) + (16 + b.packets[1].bytes.count)
        for i in 0..<4 { bytes[headerAt + 8 + i] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var message = ""
        do {
            _ = try Self.readAll(path)
        } catch {
            message = "\(error)"
        }
        #expect(message.contains("packet 3, byte offset \(headerAt + 16): corrupt packet record in the middle of the file"))
        #expect(message.contains("\(bytes.count - headerAt - 16) of \(bytes.count) bytes after it not read"))
    }

    /// A file cut inside its last packet keeps its earlier packets, with a warning.
    @Test func tornTailIsStillAWarning() throws {
        let b = Self.conversation()
        let path = try b.write()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 5).write(to: URL(fileURLWithPath: path))
        let (records, warnings) = try Self.readAll(path)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("packet \(b.packets.count)") == true)
        #expect(PcapRecordSourceTests.frames(records).count == 5)
    }

    /// A frame length of 2^63 in the client's stream: the note says which flow, which
    /// direction and where; the frames after it are found again.
    @Test func frameLengthOf2To63IsNotedWithFlowAndOffset() throws {
        let b = PcapBuilder(link: .raw)
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        c.text(fromClient: true, "{\"event\":\"bird:ping\"}")
        c.send(fromClient: true, [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
        c.text(fromClient: true, "{\"event\":\"bird:ping\",\"n\":2}")
        c.text(fromClient: false, "{\"event\":\"bird:pong\"}")
        let (records, _) = try Self.readAll(try b.write())
        let notes = records.compactMap { if case .note(let n) = $0 { n } else { nil } }
        let error = try #require(notes.first { $0.level == .error })
        // The offset is the client stream's: its upgrade request, then the 27-byte ping.
        let request = "GET /app/key?protocol=7 HTTP/1.1\r\nHost: example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        #expect(error.message.hasPrefix("client stream 127.0.0.1:50000 -> 127.0.0.2:9001, frame at offset \(request.utf8.count + 27): "))
        #expect(error.message.contains("looking for the next frame boundary"))
        let frames = PcapRecordSourceTests.frames(records)
        #expect(frames.map(\.text) == ["{\"event\":\"bird:ping\"}", "{\"event\":\"bird:ping\",\"n\":2}", "{\"event\":\"bird:pong\"}"])
    }

    /// An upgrade request never answered, then client data: the data waited for the
    /// response in the decoder, without bound (300 MB of it took the reader to 505 MB).
    /// Past 1 MiB the connection is given up, with a note.
    @Test func unansweredUpgradeHoldsAtMostOneMebibyte() throws {
        let b = PcapBuilder(link: .raw)
        let c = Conversation(b)
        c.handshake()
        c.send(fromClient: true, Array(("GET /app/key HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        let chunk = Conversation.frame(fromClient: true, .binary, [UInt8](repeating: 7, count: 60_000))
        for _ in 0..<30 { c.send(fromClient: true, chunk) }
        let (records, _) = try Self.readAll(try b.write())
        let notes = records.compactMap { if case .note(let n) = $0 { n } else { nil } }
        #expect(notes.contains { $0.level == .warning && $0.message.contains("upgrade request unanswered after 1048576 bytes") })
        #expect(PcapRecordSourceTests.frames(records).isEmpty)
    }

    /// A permessage-deflate message that inflates to 5 MB keeps its first 64 KiB, with a
    /// note; the next message (context takeover) still inflates right.
    @Test func inflatedMessagesAreCutToTheirFirst64KiB() throws {
        let b = PcapBuilder(link: .raw)
        let c = Conversation(b)
        c.handshake()
        c.upgrade(extensions: "permessage-deflate")
        let deflater = MessageDeflater(windowBits: 15, noContextTakeover: false)
        let bomb = Array(("{\"event\":\"bird:big\",\"data\":\"" + String(repeating: "0", count: 5_000_000) + "\"}").utf8)
        c.send(fromClient: false, Conversation.frame(fromClient: false, .text, deflater.deflate(bomb), rsv1: true))
        c.send(fromClient: false, Conversation.frame(fromClient: false, .text, deflater.deflate(Array("{\"event\":\"bird:pong\"}".utf8)), rsv1: true))
        let (records, _) = try Self.readAll(try b.write())
        let frames = PcapRecordSourceTests.frames(records)
        #expect(frames.map(\.payload.count) == [65536, 21])
        #expect(frames.first?.payload.starts(with: Array("{\"event\":\"bird:big\"".utf8)) == true)
        #expect(frames.last?.text == "{\"event\":\"bird:pong\"}")
        let notes = records.compactMap { if case .note(let n) = $0 { n.message } else { nil } }
        #expect(notes.contains { $0.contains("a message inflated to \(bomb.count) bytes") })
    }
}
