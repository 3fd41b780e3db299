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

    @Test(arguments: captures)
    func agreesWithTshark(_ name: String) throws {
        let path = TestEnvironment.path("Captures/pcap/\(name)")
        let ours = try TsharkDecoding.ours(path), theirs = try TsharkDecoding.tshark(path)
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

/// The same comparison through the command line: `faultline frames --format json` on each
/// committed pcap against tshark (Tests/Peers/pcap_compare.py, as Tools/pcap-compare runs it).
@Suite struct FramesCommandTsharkTests {
    @Test func framesCommandAgreesWithTshark() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary),
                     "build faultline first (Tools/test does): \(TestEnvironment.faultlineBinary)")
        let files = TsharkComparisonTests.captures.map { TestEnvironment.path("Captures/pcap/\($0)") }
        let script = TestEnvironment.path("Tests/Peers/pcap_compare.py")
        let result = try runCommand(TestEnvironment.python, [script] + files + ["--faultline", TestEnvironment.faultlineBinary],
                                    timeout: 120)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // Every file was compared, with frames in it.
        for name in TsharkComparisonTests.captures {
            #expect(result.stdout.split(separator: "\n").contains {
                $0.contains(name) && $0.contains("0 differences") && !$0.contains(": 0 frames")
            }, "\(name): \(result.stdout)")
        }
    }
}

/// pcap input through the command line: from standard input (a pipe, so nothing can seek
/// back over the magic number), and with a BPF filter through `InputSources`.
@Suite struct PcapInputTests {
    @Test func standardInputPipe() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let file = TestEnvironment.path("Captures/pcap/websocket-concurrent.pcap")
        let direct = try runFaultline(["frames", file, "--format", "json"])
        let piped = try runCommand("/bin/sh", ["-c", "cat '\(file)' | '\(TestEnvironment.faultlineBinary)' frames - --format json"])
        #expect(direct.status == 0 && piped.status == 0, "\(piped.stderr)")
        #expect(!direct.stdout.isEmpty)
        #expect(piped.stdout == direct.stdout)
    }

    @Test func filterSelectsConnectionsAndBadFilterIsAClearError() throws {
        let path = TestEnvironment.path("Captures/pcap/websocket-concurrent.pcap")
        var all = try PcapRecordSource(path: path, tool: "test")
        var clients: [String] = []
        while let r = try all.next() { if case .open(let o) = r { clients.append(o.client) } }
        try #require(clients.count == 3)
        let port = clients[1].split(separator: ":").last!
        var filtered = try PcapRecordSource(path: path, filter: "tcp port \(port)", tool: "test")
        #expect(filtered.header.settings["filter"] == .string("tcp port \(port)"))
        var kept: [String] = []
        while let r = try filtered.next() { if case .open(let o) = r { kept.append(o.client) } }
        #expect(kept == [clients[1]])
        #expect(throws: PcapError.self) { try PcapRecordSource(path: path, filter: "port nonsense", tool: "test") }
    }
}

/// pcapng and nanosecond pcap (converted with Wireshark's editcap, installed with tshark)
/// give the same records as the microsecond pcap they came from.
@Suite struct PcapFormatTests {
    static func records(_ path: String) throws -> [CaptureRecord] {
        var source = try PcapRecordSource(path: path, tool: "test")
        var records: [CaptureRecord] = []
        while let r = try source.next() { records.append(r) }
        return records
    }

    @Test(arguments: ["pcapng", "nsecpcap"])
    func convertedFormatsDecodeTheSame(_ format: String) throws {
        let original = TestEnvironment.path("Captures/pcap/websocket-deflate.pcap")
        let converted = TestEnvironment.temporaryDirectory("pcap-format").appendingPathComponent("converted.\(format)").path
        let result = try runCommand("/usr/bin/editcap", ["-F", format, original, converted])
        try #require(result.status == 0, "editcap: \(result.stderr)")
        let expected = try Self.records(original)
        #expect(expected.count > 40)
        #expect(try Self.records(converted) == expected)
    }
}
