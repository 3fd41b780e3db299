import Testing
import Foundation
import Capture
import TestSupport
@testable import Pcap

/// `PcapExporter` (behind `faultline export`): a capture written as synthetic TCP must read
/// back, through our pcap path and through tshark, as the frames it was made from.
@Suite struct ExportTests {
    struct Decoded: Equatable {
        var conn: Int, from: Side, opcode: UInt8, fin: Bool, rsv1: Bool, masked: Bool, payload: [UInt8], t: Micros
    }

    static func decoded<S: RecordSource>(_ source: inout S) throws -> (frames: [Decoded], opens: [OpenRecord], ends: [EndRecord]) {
        var frames: [Decoded] = [], opens: [OpenRecord] = [], ends: [EndRecord] = []
        while let record = try source.next() {
            switch record {
            case .frame(let f):
                frames.append(Decoded(conn: f.conn, from: f.from, opcode: f.opcode.rawValue, fin: f.fin, rsv1: f.rsv1,
                                      masked: f.masked, payload: f.payload, t: f.t))
            case .open(let o): opens.append(o)
            case .end(let e): ends.append(e)
            default: break
            }
        }
        return (frames, opens, ends)
    }

    static func export<S: RecordSource>(_ source: inout S) throws -> String {
        let path = TestEnvironment.temporaryDirectory("pcap-export").appendingPathComponent("export.pcap").path
        var exporter = try PcapExporter(path: path)
        try exporter.export(&source)
        return path
    }

    @Test func proxyCaptureReadsBackFrameForFrame() throws {
        let capture = TestEnvironment.path("Captures/sample-session.jsonl")
        var original = try CaptureReader(path: capture)
        let expected = try Self.decoded(&original)
        var reader = try CaptureReader(path: capture)
        let path = try Self.export(&reader)

        var back = try PcapRecordSource(path: path, tool: "test")
        let got = try Self.decoded(&back)
        try #require(got.frames.count == expected.frames.count)
        // The pcap's time base is its first packet (the first open record).
        let shift = expected.opens.first!.t
        for (a, b) in zip(got.frames, expected.frames) {
            var b = b
            b.t -= shift
            #expect(a == b)
        }
        #expect(got.opens.map(\.client) == expected.opens.map(\.client))
        #expect(got.opens.map(\.server) == expected.opens.map(\.server))
        // FIN and RST come back with their sides (a socket error is written as RST);
        // capture-end ones are not on the wire.
        let wire = expected.ends.filter { $0.kind != .captureEnd }.map { "\($0.conn) \($0.side) \($0.kind == .error ? .rst : $0.kind)" }
        #expect(got.ends.filter { $0.kind != .captureEnd }.map { "\($0.conn) \($0.side) \($0.kind)" } == wire)
        #expect(!wire.isEmpty)
    }

    @Test func tsharkDecodesTheExportAsFramesLists() throws {
        var reader = try CaptureReader(path: TestEnvironment.path("Captures/sample-session.jsonl"))
        let path = try Self.export(&reader)
        let ours = try TsharkDecoding.ours(path)
        // The sample's server port 6001 is X11's to tshark: tell it to decode HTTP there.
        let theirs = try TsharkDecoding.tshark(path, httpPorts: [6001])
        #expect(theirs.rows.count == ours.rows.count)
        let oursByOrder = ours.rows.sorted { $0.key < $1.key }.map(\.value)
        let theirsByOrder = theirs.rows.sorted { $0.key < $1.key }.map(\.value)
        #expect(oursByOrder == theirsByOrder)
        let oursTexts = ours.texts.sorted { $0.key < $1.key }.map(\.value)
        let theirTexts = theirs.texts.sorted { $0.key < $1.key }.map(\.value)
        #expect(oursTexts == theirTexts)
    }

    @Test func compressedConnectionsAreDeflatedAgain() throws {
        var source = try PcapRecordSource(path: TestEnvironment.path("Captures/pcap/websocket-deflate.pcap"), tool: "test")
        let path = try Self.export(&source)
        var original = try PcapRecordSource(path: TestEnvironment.path("Captures/pcap/websocket-deflate.pcap"), tool: "test")
        let expected = try Self.decoded(&original)
        var back = try PcapRecordSource(path: path, tool: "test")
        let got = try Self.decoded(&back)
        #expect(got.frames.map(\.payload) == expected.frames.map(\.payload))
        #expect(got.frames.map(\.rsv1) == expected.frames.map(\.rsv1))
        #expect(got.frames.contains { $0.rsv1 })
        // tshark inflates the re-deflated single-frame messages to the same text.
        let ours = try TsharkDecoding.ours(path), theirs = try TsharkDecoding.tshark(path)
        var compared = 0
        for (conn, rows) in theirs.rows {
            let ourConn = conn + 1
            for (i, row) in rows.enumerated() where row.opcode == 1 && row.fin {
                guard let text = theirs.texts[conn]?[i], !text.contains("\u{FFFD}") else { continue }
                #expect(ours.texts[ourConn]?[i] == text)
                compared += 1
            }
        }
        #expect(compared > 10)
    }
}

/// `faultline export` through the command line: tshark decodes the written pcap exactly as
/// `faultline frames --format json` lists it.
@Suite struct ExportCommandTests {
    @Test func exportedPcapDecodesAsFramesLists() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let out = TestEnvironment.temporaryDirectory("export-cli").appendingPathComponent("sample.pcap").path
        let export = try runFaultline(["export", TestEnvironment.path("Captures/sample-session.jsonl"), "--pcap", out])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("frames"))
        let compare = try runCommand(TestEnvironment.python, [TestEnvironment.path("Tests/Peers/pcap_compare.py"), out,
                                                              "--faultline", TestEnvironment.faultlineBinary, "--http-port", "6001"])
        #expect(compare.status == 0, "\(compare.stdout)\n\(compare.stderr)")
        #expect(compare.stdout.contains("0 differences") && !compare.stdout.contains(": 0 frames compared"), "\(compare.stdout)")
    }

    @Test func missingPcapOptionIsAUsageError() throws {
        let result = try runFaultline(["export", TestEnvironment.path("Captures/sample-session.jsonl")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--pcap"))
    }
}
