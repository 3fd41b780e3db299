import Testing
import Foundation
import Capture
import JSON
import TestSupport
@testable import Pcap

/// The committed pcaps of real `websockets` traffic (made by Tools/pcap-compare), decoded by
/// `PcapRecordSource` and by tshark, must agree frame by frame: direction, opcode, FIN, RSV1,
/// wire length, close code, and the text after decompression where tshark can give it.
@Suite struct TsharkComparisonTests {
    static let captures = ["websocket-plain.pcap", "websocket-deflate.pcap", "websocket-concurrent.pcap"]

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

    static func tshark(_ path: String) throws -> (rows: [Int: [Row]], texts: [Int: [String?]]) {
        let script = TestEnvironment.path("Tests/Peers/pcap_tshark.py")
        // Through a file: lines of 64 KiB texts are more than a pipe should be trusted with.
        let out = TestEnvironment.temporaryDirectory("pcap-tshark").appendingPathComponent("frames.jsonl")
        let result = try runCommand(TestEnvironment.python, [script, path, "--out", out.path], timeout: 60)
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

    @Test(arguments: captures)
    func agreesWithTshark(_ name: String) throws {
        let path = TestEnvironment.path("Captures/pcap/\(name)")
        let ours = try Self.ours(path), theirs = try Self.tshark(path)
        #expect(ours.rows.count == theirs.rows.count, "connections: ours \(ours.rows.count), tshark \(theirs.rows.count)")
        var unmatched = ours.rows
        var compared = 0
        for (stream, expected) in theirs.rows.sorted(by: { $0.key < $1.key }) {
            guard let conn = unmatched.first(where: { $0.value == expected })?.key else {
                let closest = unmatched.sorted { $0.key < $1.key }.first
                let got = closest?.value ?? []
                let i = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] } ?? min(got.count, expected.count)
                let mine = i < got.count ? got[i].description : "none"
                let tshark = i < expected.count ? expected[i].description : "none"
                Issue.record("\(name): tcp.stream \(stream) has no equal connection; first difference at frame \(i + 1): ours \(mine), tshark \(tshark)")
                if let key = closest?.key { unmatched[key] = nil }
                continue
            }
            unmatched[conn] = nil
            // Texts: tshark 4.0 cannot inflate fragmented compressed messages (U+FFFD), and
            // records the inflated message on the final frame only; compare what it can give.
            for (i, (row, text)) in zip(expected, theirs.texts[stream]!).enumerated() {
                guard let text, !text.contains("\u{FFFD}"), row.opcode == 1 || row.opcode == 0, !(row.rsv1 && !row.fin) else { continue }
                if row.opcode == 0, ours.rows[conn]!.prefix(i).last(where: { $0.opcode != 0 })?.rsv1 == true { continue }
                #expect(ours.texts[conn]![i] == text, "\(name) conn \(conn) frame \(i + 1)")
                compared += 1
            }
        }
        #expect(compared > 0)
        // Every connection ends with both sides' TCP ends.
        let ends = ours.records.compactMap { if case .end(let e) = $0 { e } else { nil } }
        for conn in ours.rows.keys {
            #expect(Set(ends.filter { $0.conn == conn }.map(\.side)) == [.client, .server], "conn \(conn) ends")
        }
    }
}
