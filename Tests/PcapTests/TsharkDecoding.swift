import Testing
import Foundation
import Capture
import JSON
import TestSupport
@testable import Pcap

/// The frames of a pcap as `PcapRecordSource` and as tshark (through
/// Tests/Peers/pcap_tshark.py) decode them, per connection, in comparable rows.
enum TsharkDecoding {
    struct Row: Equatable, CustomStringConvertible {
        var from: String
        var opcode: Int
        var fin: Bool
        var rsv1: Bool
        var length: Int
        var closeCode: Int?
        var description: String { "\(from) op=\(opcode) fin=\(fin) rsv1=\(rsv1) len=\(length) close=\(closeCode.map(String.init) ?? "-")" }
    }

    static func ours(_ path: String) throws -> (rows: [Int: [Row]], texts: [Int: [String?]], records: [CaptureRecord]) {
        var source = try PcapRecordSource(path: path, tool: "test")
        var rows: [Int: [Row]] = [:], texts: [Int: [String?]] = [:]
        var records: [CaptureRecord] = []
        while let record = try source.next() {
            records.append(record)
            guard case .frame(let f) = record else { continue }
            rows[f.conn, default: []].append(Row(from: f.from.rawValue, opcode: Int(f.opcode.rawValue), fin: f.fin, rsv1: f.rsv1,
                                                 length: f.length, closeCode: f.closeCode.map(Int.init)))
            texts[f.conn, default: []].append(f.opcode == .text || f.opcode == .continuation ? String(decoding: f.payload, as: UTF8.self) : nil)
        }
        return (rows, texts, records)
    }

    static func tshark(_ path: String, httpPorts: [Int] = []) throws -> (rows: [Int: [Row]], texts: [Int: [String?]]) {
        let script = TestEnvironment.path("Tests/Peers/pcap_tshark.py")
        // Through a file: lines of 64 KiB texts are more than a pipe should be trusted with.
        let out = TestEnvironment.temporaryDirectory("pcap-tshark").appendingPathComponent("frames.jsonl")
        let result = try runCommand(TestEnvironment.python, [script, path, "--out", out.path] + httpPorts.flatMap { ["--http-port", String($0)] }, timeout: 60)
        try #require(result.status == 0, "tshark failed: \(result.stderr)")
        var rows: [Int: [Row]] = [:], texts: [Int: [String?]] = [:]
        for line in try String(contentsOf: out, encoding: .utf8).split(separator: "\n") {
            guard case .object(let o) = try JSONParser.parse(String(line)) else { continue }
            func int(_ k: String) -> Int? { if case .int(let v) = o[k] { Int(v) } else { nil } }
            func bool(_ k: String) -> Bool { if case .bool(let v) = o[k] { v } else { false } }
            let conn = int("conn") ?? -1
            rows[conn, default: []].append(Row(from: { if case .string(let s) = o["from"] { s } else { "" } }(),
                                               opcode: int("opcode") ?? -1, fin: bool("fin"), rsv1: bool("rsv1"),
                                               length: int("len") ?? -1, closeCode: int("close_code")))
            texts[conn, default: []].append({ if case .string(let s) = o["text"] { s } else { nil } }())
        }
        return (rows, texts)
    }

}
