import Testing
import Foundation
import Capture
import TestSupport
import Vocabulary
import WebSocket
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
/// Issue 17 item 6: a proxy capture exported as both legs, each with only what crossed it,
/// and a pcapng comment on every packet a fault touched, as tshark reads them.
@Suite struct ExportLegTests {
    @Test func eachLegCarriesWhatCrossedItWithFaultComments() throws {
        let directory = TestEnvironment.temporaryDirectory("export-legs")
        let capture = directory.appendingPathComponent("proxy.jsonl").path
        let writer = try CaptureWriter(path: capture, header: CaptureHeader(tool: "test", startedAt: 1_700_000_000_000_000,
                                                                            source: "proxy"))
        func text(_ t: Micros, _ from: Side, _ body: String, _ action: FrameAction, _ fault: String? = nil) -> CaptureRecord {
            .frame(FrameRecord(conn: 1, t: t, from: from, opcode: .text, masked: from == .client, payload: Array(body.utf8),
                               action: action, fault: fault))
        }
        for record: CaptureRecord in [
            .open(OpenRecord(conn: 1, t: 0, client: "127.0.0.1:50000", server: "127.0.0.1:7000", upstream: "127.0.0.1:8000")),
            .upgrade(UpgradeRecord(conn: 1, t: 10, from: .client, method: "GET", target: "/app/key",
                                   headers: [HeaderField("Host", "127.0.0.1:7000"), HeaderField("Upgrade", "websocket"),
                                             HeaderField("Connection", "Upgrade"),
                                             HeaderField("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                             HeaderField("Sec-WebSocket-Version", "13")])),
            .note(NoteRecord(conn: 1, t: 20, level: .info, message: "upstream leg: 127.0.0.1:51000 -> 127.0.0.1:8000")),
            .upgrade(UpgradeRecord(conn: 1, t: 30, from: .server, status: 101, reason: "Switching Protocols",
                                   headers: [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                                             HeaderField("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")])),
            text(100, .client, "relayed", .forwarded),
            text(200, .server, "held", .delayed(50_000), "latency:50ms"),
            text(300, .server, "made-up", .injected, "inject:{}"),
            text(400, .client, "swallowed", .dropped, "blackhole"),
            .end(EndRecord(conn: 1, t: 500, side: .server, kind: .rst, detail: "sent by the proxy to the client (fault reset)", leg: .client)),
            .end(EndRecord(conn: 1, t: 500, side: .client, kind: .rst, detail: "sent by the proxy to the server (fault reset)", leg: .upstream)),
        ] { try writer.append(record) }
        try writer.close()
        var reader = try CaptureReader(path: capture)
        let pcap = directory.appendingPathComponent("proxy.pcapng").path
        var exporter = try PcapExporter(path: pcap)
        try exporter.export(&reader)

        let run = try runCommand("/usr/bin/tshark", ["-r", pcap, "-d", "tcp.port==7000,http", "-d", "tcp.port==8000,http",
                                                      "-T", "fields", "-E", "separator=|", "-e", "tcp.srcport", "-e", "tcp.dstport",
                                                      "-e", "websocket.payload.text", "-e", "frame.comment"], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        func carrying(_ text: String) -> [String] { rows.filter { $0[2] == text }.map { "\($0[0])>\($0[1]) \($0[3])" } }
        #expect(carrying("relayed") == ["50000>7000 ", "51000>8000 "])
        #expect(carrying("held") == ["8000>51000 faultline: delayed 50.0 ms by fault latency:50ms",
                                       "7000>50000 faultline: delayed 50.0 ms by fault latency:50ms"])
        #expect(carrying("made-up") == ["7000>50000 faultline: injected by fault inject:{}: made up, not sent by the server"])
        #expect(carrying("swallowed") == ["50000>7000 faultline: dropped by fault blackhole: not passed on to the server"])
        let resets = rows.filter { $0[3].hasPrefix("faultline: RST") }.map { "\($0[0])>\($0[1])" }
        #expect(resets == ["7000>50000", "51000>8000"])
    }
}

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
