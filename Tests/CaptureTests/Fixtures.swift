import Capture
import Foundation
import JSON
import WebSocket

/// One record of every type and shape the format has, for round trips and the docs.
enum Fixtures {
    static let header = CaptureHeader(tool: "faultline 0.1.0", startedAt: 1_767_225_600_000_000, source: "proxy",
                                      settings: ["listen": "127.0.0.1:8080", "upstream": "ws://127.0.0.1:6001",
                                                 "faults": ["close:4009,after=30s"]])

    static let records: [CaptureRecord] = [
        .header(header),
        .open(OpenRecord(conn: 1, t: 1_250, client: "127.0.0.1:50123", server: "127.0.0.1:8080", upstream: "127.0.0.1:6001")),
        .open(OpenRecord(conn: 2, t: 1_300, client: "[::1]:50124", server: "[::1]:8080")),
        .upgrade(UpgradeRecord(conn: 1, t: 1_900, from: .client, method: "GET", target: "/app/key?protocol=7",
                               headers: [HeaderField("Host", "127.0.0.1:8080"), HeaderField("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")])),
        .upgrade(UpgradeRecord(conn: 1, t: 3_100, from: .server, status: 101, reason: "Switching Protocols",
                               headers: [HeaderField("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")])),
        .frame(FrameRecord(conn: 1, t: 4_000, from: .server, opcode: .text, masked: false,
                           payload: Array(#"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.2\"}"}"#.utf8))),
        // Text needing every escape, and non-ASCII text (é, emoji: surrogate pairs in UTF-16).
        .frame(FrameRecord(conn: 1, t: 4_100, from: .client, opcode: .text, masked: true,
                           payload: Array("quote \" backslash \\ newline \n tab \t cr \r nul \u{0} bell \u{7} é 😀 / \u{2028}".utf8))),
        // Binary: not UTF-8, every byte value.
        .frame(FrameRecord(conn: 1, t: 4_200, from: .client, opcode: .binary, masked: true, payload: (0...255).map { UInt8($0) })),
        .frame(FrameRecord(conn: 1, t: 4_250, from: .server, opcode: .binary, masked: false, payload: [0xC3, 0x28])),
        .frame(FrameRecord(conn: 1, t: 4_300, from: .server, opcode: .ping, masked: false, payload: [])),
        .frame(FrameRecord(conn: 1, t: 4_400, from: .client, opcode: .pong, masked: true, payload: [])),
        // Fragments, rsv bits, compression, a reserved opcode, a protocol error and a fault.
        .frame(FrameRecord(conn: 1, t: 4_500, from: .client, opcode: .text, fin: false, rsv1: true, masked: true,
                           length: 7, payload: Array("Hel".utf8), compressed: true)),
        .frame(FrameRecord(conn: 1, t: 4_600, from: .client, opcode: .continuation, rsv2: true, rsv3: true, masked: true,
                           payload: Array("lo".utf8))),
        .frame(FrameRecord(conn: 1, t: 4_700, from: .server, opcode: Opcode(rawValue: 0xB), masked: false, payload: [1, 2],
                           protocolError: "reserved opcode 0xb")),
        .frame(FrameRecord(conn: 1, t: 5_000, from: .server, opcode: .text, masked: false, payload: Array("{}".utf8),
                           action: .dropped, fault: "drop:server,event=bird:pong")),
        .frame(FrameRecord(conn: 1, t: 5_100, from: .server, opcode: .text, masked: false, payload: Array("{}".utf8),
                           action: .delayed(250_000), fault: "latency:250ms")),
        .frame(FrameRecord(conn: 1, t: 5_200, from: .client, opcode: .text, masked: true, payload: [],
                           action: .observed)),
        // Close frames: with reason, code only, empty, malformed (one byte), bad UTF-8 reason.
        .frame(FrameRecord(conn: 1, t: 6_000, from: .server, opcode: .close, masked: false,
                           payload: [0x0F, 0xA9] + Array("terminated".utf8), action: .injected, fault: "close:4009")),
        .frame(FrameRecord(conn: 1, t: 6_100, from: .client, opcode: .close, masked: true, payload: [0x03, 0xE8])),
        .frame(FrameRecord(conn: 2, t: 6_200, from: .client, opcode: .close, masked: true, payload: [])),
        .frame(FrameRecord(conn: 2, t: 6_300, from: .client, opcode: .close, masked: true, payload: [0x03],
                           protocolError: "close payload of 1 byte")),
        .frame(FrameRecord(conn: 2, t: 6_400, from: .server, opcode: .close, masked: false, payload: [0x03, 0xE8, 0xFF])),
        .end(EndRecord(conn: 1, t: 7_000, side: .server, kind: .fin)),
        .end(EndRecord(conn: 2, t: 7_100, side: .client, kind: .rst, detail: "connection reset by peer")),
        .end(EndRecord(conn: 2, t: 7_200, side: .server, kind: .captureEnd)),
        .end(EndRecord(conn: 2, t: 7_300, side: .server, kind: .error, detail: "ETIMEDOUT")),
        .fault(FaultRecord(conn: 1, t: 5_900, rule: "close:4009,after=30s", kind: "close", target: .client,
                           detail: "sent close 4009 'terminated' to client")),
        .fault(FaultRecord(conn: nil, t: 0, rule: "stall-pongs", kind: "stall-pongs", detail: "rule added")),
        .note(NoteRecord(conn: 2, t: 6_350, level: .warning, message: "client sent a 1-byte close payload")),
        .note(NoteRecord(conn: nil, t: 8_000, level: .info, message: "pcap: 3 packets missing")),
    ]

    /// A fresh file path in a fresh temporary directory.
    static func temporaryFile(_ name: String = "capture.jsonl") -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("faultline-capture-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    /// Writes `text` to a fresh temporary file and returns its path.
    static func file(_ text: String, name: String = "capture.jsonl") -> String {
        let path = temporaryFile(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    static var headerLine: String { String(decoding: RecordCoding.encode(.header(header)), as: UTF8.self) }

    static func line(_ record: CaptureRecord) -> String { String(decoding: RecordCoding.encode(record), as: UTF8.self) }

    /// All records of a reader, with its warnings.
    static func readAll(_ path: String, chunkSize: Int = 64 * 1024) throws -> (records: [CaptureRecord], warnings: [String]) {
        var reader = try CaptureReader(path: path, chunkSize: chunkSize)
        var records: [CaptureRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }
        return (records, reader.warnings)
    }
}
