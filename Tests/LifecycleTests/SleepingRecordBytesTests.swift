import Capture
import Testing
@testable import Lifecycle
import Vocabulary
import WebSocket

/// The byte form sleeping clients keep their opens and frames in (`SleepingRecordBytes`):
/// every field comes back, a cut-short encoding is refused rather than trapping, and
/// clients slept through frames of every shape find what awake ones find.
@Suite struct SleepingRecordBytesTests {
    static let opens = [
        OpenRecord(conn: 1, t: 1010, client: "10.0.0.1:5000", server: "127.0.0.1:8080"),
        OpenRecord(conn: .max, t: -(1 << 62) + 1, client: "[::1]:50123", server: "", upstream: "127.0.0.1:9000"),
        OpenRecord(conn: 0, t: (1 << 62) - 1, client: "é \u{1b}[31m\n", server: "x", upstream: ""),
    ]

    static var frames: [FrameRecord] {
        let actions: [FrameAction] = [.forwarded, .dropped, .delayed(0), .delayed(1_500_000), .delayed(.max), .injected,
                                      .observed]
        var frames: [FrameRecord] = []
        for (i, action) in actions.enumerated() {
            let bits = i * 37
            var frame = FrameRecord(conn: i * 1_000_003, t: Micros(i) * -7_777_777, from: i % 2 == 0 ? .client : .server,
                                    opcode: Opcode(rawValue: UInt8(i * 3 % 16)), fin: bits & 1 != 0, rsv1: bits & 2 != 0,
                                    rsv2: bits & 4 != 0, rsv3: bits & 8 != 0, masked: bits & 16 != 0,
                                    length: i == 3 ? 70_000 : nil, payload: Array(repeating: UInt8(i), count: i * i * 300),
                                    compressed: bits & 32 != 0, action: action,
                                    protocolError: i % 3 == 0 ? nil : "RSV1 set without \"permessage-deflate\"",
                                    fault: i % 2 == 0 ? "" : "delay ms=1500,event=bird:pong")
            if i == 3 { frame.sha256 = String(repeating: "ab", count: 32) }
            frames.append(frame)
        }
        return frames
    }

    @Test func everyFieldComesBack() throws {
        for open in Self.opens {
            var bytes: [UInt8] = []
            SleepingRecordBytes.encode(open, into: &bytes)
            var i = 0
            #expect(SleepingRecordBytes.open(bytes, at: &i) == open)
            #expect(i == bytes.count)
        }
        for frame in Self.frames {
            var bytes: [UInt8] = [0xEE]   // read at an offset, as in a sleeper's list
            SleepingRecordBytes.encode(frame, into: &bytes)
            var i = 1
            let back = try #require(SleepingRecordBytes.frame(bytes, at: &i))
            #expect(back == frame)
            #expect(back.sha256 == frame.sha256 && back.action == frame.action && back.fault == frame.fault)
            #expect(i == bytes.count)
        }
    }

    /// The open and frame of a one-frame connection, the shape a million sleep in.
    @Test func aOneFrameConnectionIsSmall() {
        var bytes: [UInt8] = []
        SleepingRecordBytes.encode(Self.opens[0], into: &bytes)
        SleepingRecordBytes.encode(FrameRecord(conn: 1, t: 1011, from: .server, opcode: .text, masked: false,
                                               payload: Array("hi".utf8)), into: &bytes)
        #expect(bytes.count < 60)
    }

    /// Every strict prefix of an encoding is refused (nil), none traps.
    @Test func aCutEncodingIsRefused() {
        for frame in Self.frames.prefix(4) {
            var bytes: [UInt8] = []
            SleepingRecordBytes.encode(frame, into: &bytes)
            for end in 0..<bytes.count {
                var i = 0
                #expect(SleepingRecordBytes.frame(Array(bytes[..<end]), at: &i) == nil)
            }
        }
        for open in Self.opens {
            var bytes: [UInt8] = []
            SleepingRecordBytes.encode(open, into: &bytes)
            for end in 0..<bytes.count {
                var i = 0
                #expect(SleepingRecordBytes.open(Array(bytes[..<end]), at: &i) == nil)
            }
        }
        var i = 0
        // A varint that never ends, and an action the encoder never writes.
        #expect(SleepingRecordBytes.frame(Array(repeating: 0xFF, count: 12), at: &i) == nil)
        i = 0
        #expect(SleepingRecordBytes.frame([2, 2, 0, 1, 9, 4, 0, 0, 0, 0], at: &i) == nil)
    }

    /// Clients asleep between every two inputs, through frames delayed, dropped, injected
    /// and touched by faults, pings left unanswered and opens through an upstream: the
    /// same events as clients that never sleep, findings among them.
    @Test func sleptClientsFindWhatAwakeOnesFind() throws {
        var wire = Wire()
        for c in 0..<12 {
            let at = Double(c) * 0.4
            // Some handshakes without a socket id: findings the slept clients must find too.
            let conn = wire.connect(at: at, ip: "10.1.0.\(c % 4)", missingID: c % 5 == 0)
            wire.subscribe(conn, at: at + 0.02, "chan-\(c)")
            wire.server(conn, at: at + 0.03, #"{"event":"bird:subscribed","channel":"chan-\#(c)"}"#,
                        action: c % 3 == 0 ? .delayed(250_000) : c % 3 == 1 ? .dropped : .injected,
                        fault: c % 2 == 0 ? "delay ms=250" : nil)
            wire.ping(conn, at: at + 0.5)
            if c % 2 == 0 { wire.pong(conn, at: at + 0.55, action: .delayed(40_000)) }
            if c % 4 == 3 { wire.close(conn, at: at + 0.7, from: .server, code: 4009, action: .dropped, fault: "close code=4009") }
            if c % 3 != 2 { wire.end(conn, at: at + 0.9) }
        }
        var records: [CaptureRecord] = []
        for record in wire.records {
            if case .open(var open) = record {
                open.upstream = "127.0.0.1:9\(open.conn % 10)00"
                records.append(.open(open))
            } else {
                records.append(record)
            }
        }
        records.sort { ($0.time ?? 0) < ($1.time ?? 0) }
        var spec = try SpecLoader.load("bird")
        spec.tolerances.timing = 0
        spec.tolerances.immediate = 0
        let sleeping = SleepingClientTests.run(records, spec: spec, maxAwake: 0)
        let awake = SleepingClientTests.run(records, spec: spec)
        #expect(sleeping.asleep > 0)
        #expect(sleeping.events == awake.events)
        #expect(awake.events.contains { if case .finding = $0 { true } else { false } })
    }
}
