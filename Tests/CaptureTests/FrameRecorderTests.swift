import Testing
import WebSocket
@testable import Capture

/// The one recorder behind the relay and the pcap reader (issue 16 item 2): what it does
/// after a compressed message it could not inflate, and its one reassembly limit.
@Suite struct FrameRecorderTests {
    static func records(_ recorder: inout FrameRecorder, _ frames: [Frame]) throws -> (records: [FrameRecord], notes: [NoteRecord]) {
        for frame in frames { recorder.append(FrameEncoder.encode(frame)) }
        var records: [FrameRecord] = []
        var notes: [NoteRecord] = []
        while let next = try recorder.next(conn: 1, t: 0, action: .observed, subject: "server", notes: &notes) {
            records.append(next.record)
        }
        return (records, notes)
    }

    static func recorder(standAlone: Bool, maxPayload: Int = 1 << 20) -> FrameRecorder {
        var recorder = FrameRecorder(sender: .server, limits: FrameRecorder.Limits(maxPayload: maxPayload))
        var deflate = DeflateParameters()
        deflate.serverNoContextTakeover = standAlone
        recorder.negotiated(deflate)
        return recorder
    }

    static func compressed(_ text: String) -> Frame {
        let deflater = MessageDeflater(windowBits: 15, noContextTakeover: true)
        return Frame(rsv1: true, opcode: .text, payload: deflater.deflate(Array(text.utf8)))
    }

    /// Not deflate data: zlib rejects it.
    static let garbage = Frame(rsv1: true, opcode: .text, payload: [0xFF, 0xFF, 0xFF, 0xFF, 0x00])

    @Test func withContextTakeoverAFailedMessageTurnsInflationOff() throws {
        var recorder = Self.recorder(standAlone: false)
        let (records, notes) = try Self.records(&recorder, [Self.compressed("one"), Self.garbage, Self.compressed("two")])
        #expect(records[0].payload == Array("one".utf8) && records[0].compressed)
        #expect(!records[1].compressed && records[1].payload == Self.garbage.payload)
        #expect(!records[2].compressed, "the window is lost: recorded as sent, not inflated to wrong bytes")
        #expect(notes.count == 1 && notes[0].message.contains("could not inflate") && notes[0].message.contains("inflation off"))
        #expect(!recorder.inflates)
    }

    @Test func withNoContextTakeoverLaterMessagesAreStillInflated() throws {
        var recorder = Self.recorder(standAlone: true)
        let (records, notes) = try Self.records(&recorder, [Self.garbage, Self.compressed("two")])
        #expect(!records[0].compressed)
        #expect(records[1].compressed && records[1].payload == Array("two".utf8))
        #expect(notes.count == 1 && notes[0].message.contains("messages stand alone"))
        #expect(recorder.inflates)
    }

    @Test func reassemblyStopsAtTheOneLimit() throws {
        var recorder = Self.recorder(standAlone: false, maxPayload: 1_000)
        var frames = [Frame(fin: false, rsv1: true, opcode: .binary, payload: [UInt8](repeating: 1, count: 600))]
        frames += (0..<5).map { _ in Frame(fin: false, opcode: .continuation, payload: [UInt8](repeating: 2, count: 600)) }
        let (records, notes) = try Self.records(&recorder, frames)
        #expect(records.count == 6, "every frame is recorded")
        #expect(notes.filter { $0.message.contains("over 1000 bytes") }.count == 1)
        #expect(records.dropFirst().allSatisfy { !$0.compressed })
    }

    @Test func aNonMinimalLengthIsAProtocolErrorWhicheverPathCutTheFrame() throws {
        var recorder = FrameRecorder(sender: .server, limits: FrameRecorder.Limits(), validator: MessageValidator())
        // The non-minimal frame and a whole one after it in one read, then again split.
        let odd: [UInt8] = [0x81, 126, 0, 5] + Array("hello".utf8)
        let plain = FrameEncoder.encode(.text("world"))
        recorder.append(odd + plain)
        var notes: [NoteRecord] = []
        let first = try #require(try recorder.next(conn: 1, t: 0, action: .observed, subject: "server", notes: &notes))
        let second = try #require(try recorder.next(conn: 1, t: 0, action: .observed, subject: "server", notes: &notes))
        #expect(first.record.protocolError?.contains("minimal") == true)
        #expect(second.record.protocolError == nil)
        recorder.append(plain + odd)
        let third = try #require(try recorder.next(conn: 1, t: 0, action: .observed, subject: "server", notes: &notes))
        let fourth = try #require(try recorder.next(conn: 1, t: 0, action: .observed, subject: "server", notes: &notes))
        #expect(third.record.protocolError == nil)
        #expect(fourth.record.protocolError?.contains("minimal") == true)
    }
}
