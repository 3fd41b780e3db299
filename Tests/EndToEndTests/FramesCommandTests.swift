import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport
import Vocabulary
import WebSocket

/// `faultline frames` answering "what happened on connection 3" (issue 18 item 12): the
/// filters, --all, --payload, --filter on a pcap, --follow on a capture being written.
@Suite struct FramesFilterTests {
    static func us(_ s: Double) -> Micros { Micros(s * 1_000_000) }

    static func text(_ conn: Int, _ t: Double, _ from: Side, _ body: String) -> CaptureRecord {
        .frame(FrameRecord(conn: conn, t: us(t), from: from, opcode: .text, masked: from == .client, payload: Array(body.utf8)))
    }

    /// Two clients (different User-Agents); conn 1 is dropped by a fault, conn 3 is client 1 again.
    static func records() -> [CaptureRecord] {
        var r: [CaptureRecord] = []
        for (conn, t, agent) in [(1, 0.0, "ua-one"), (2, 0.1, "ua-two"), (3, 2.0, "ua-one")] {
            if conn == 3 {
                r.append(.fault(FaultRecord(conn: 1, t: us(1), rule: "drop,after=1s", kind: "drop", target: .client, detail: "ended with FIN")))
                r.append(.end(EndRecord(conn: 1, t: us(1), side: .server, kind: .fin)))
                r.append(.frame(FrameRecord(conn: 2, t: us(1.2), from: .server, opcode: .binary, masked: false, payload: [0, 1, 2, 0xFF, 0x1B])))
                r.append(.note(NoteRecord(conn: 2, t: us(1.5), level: .warning, message: "odd\u{1B}[31m reason")))
            }
            r.append(.open(OpenRecord(conn: conn, t: us(t), client: "10.0.0.1:4000\(conn)", server: "127.0.0.1:80")))
            r.append(.upgrade(UpgradeRecord(conn: conn, t: us(t) + 1000, from: .client, method: "GET", target: "/app/k",
                                            headers: [HeaderField("User-Agent", agent)])))
            r.append(.upgrade(UpgradeRecord(conn: conn, t: us(t) + 2000, from: .server, status: 101, headers: [])))
            r.append(text(conn, t + 0.01, .server, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"\#(conn).1\"}"}"#))
            r.append(text(conn, t + 0.02, .client, #"{"event":"bird:subscribe","data":{"channel":"news-\#(conn)"}}"#))
        }
        return r
    }

    static func capture(_ records: [CaptureRecord] = records()) throws -> String {
        let path = TestEnvironment.temporaryDirectory("frames").appendingPathComponent("c.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for r in records { try writer.append(r) }
        try writer.close()
        return path
    }

    static func lines(_ args: [String]) throws -> [String] {
        let run = try runFaultline(["frames"] + args)
        #expect(run.status == 0, "\(args): \(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test func connClientFromAndEventFilterFrames() throws {
        let path = try Self.capture()
        let conn3 = try Self.lines([path, "--conn", "3"])
        #expect(conn3.count == 2 && conn3.allSatisfy { $0.contains("#3 ") })
        #expect(try Self.lines([path, "--conn", "1,3"]).count == 4)
        #expect(try Self.lines([path, "--conn", "2-3"]).count == 5)
        // client-1 is conns 1 and 3 (same User-Agent, one after the other), as analyze groups them.
        let client1 = try Self.lines([path, "--client", "client-1", "--format", "json"]).map { try JSONParser.parse($0) }
        #expect(Set(client1.compactMap { $0["conn"]?.intValue }) == [1, 3])
        let fromServer = try Self.lines([path, "--from", "server"])
        #expect(fromServer.count == 4 && fromServer.allSatisfy { $0.contains("server->client") })
        let subscribes = try Self.lines([path, "--event", "subscribe"])
        #expect(subscribes.count == 3 && subscribes.allSatisfy { $0.hasSuffix("bird:subscribe") })
        #expect(try Self.lines([path, "--event", "bird:subscribe", "--conn", "2"]).count == 1)
        let bad = try runFaultline(["frames", path, "--conn", "x"])
        #expect(bad.status == 2 && bad.stderr.contains("--conn"))
    }

    @Test func allShowsOpensUpgradesEndsNotesAndFaultsInOrder() throws {
        let path = try Self.capture()
        let conn1 = try Self.lines([path, "--conn", "1", "--all"])
        let kinds = conn1.map { $0.split(separator: " ", omittingEmptySubsequences: true)[2] }
        #expect(kinds == ["open", "upgrade", "upgrade", "server->client", "client->server", "fault", "end"])
        #expect(conn1.last?.hasSuffix("end     FIN from server") == true)
        #expect(conn1[5].contains("fault   drop,after=1s: ended with FIN"))
        // A control character in a note is escaped, not sent to the terminal.
        let note = try #require(try Self.lines([path, "--conn", "2", "--all"]).first { $0.contains(" note ") })
        #expect(!note.contains("\u{1B}") && note.contains(#"\u001b"#))
        let json = try Self.lines([path, "--conn", "1", "--all", "--format", "json"]).map { try JSONParser.parse($0) }
        #expect(json.compactMap { $0["record"]?.stringValue } == ["open", "upgrade", "upgrade", "fault", "end"])
        #expect(json.last?["kind"]?.stringValue == "fin")
        // --client keeps a connection's open, held until the upgrade groups it.
        let client2 = try Self.lines([path, "--client", "client-2", "--all", "--format", "json"]).map { try JSONParser.parse($0) }
        #expect(client2.first?["record"]?.stringValue == "open" && client2.first?["conn"]?.intValue == 2)
    }

    @Test func payloadShowsTextOrBase64CutToTheLimit() throws {
        let path = try Self.capture()
        let text = try Self.lines([path, "--conn", "2", "--payload", "--max-payload-chars", "20"])
        #expect(text.contains(#"  "{\"event\":\"bird:conne" (cut; 72 bytes)"#), "\(text)")
        #expect(text.contains(#"  base64 "AAEC/xs=""#))
        let json = try Self.lines([path, "--conn", "2", "--payload", "--format", "json"]).map { try JSONParser.parse($0) }
        let binary = try #require(json.first { $0["opcode"]?.intValue == 2 })
        #expect(binary["payload"]?.stringValue == "AAEC/xs=" && binary["payload_encoding"]?.stringValue == "base64")
        #expect(json.first?["payload"]?.stringValue?.hasPrefix(#"{"event":"bird:connection_established""#) == true)
        #expect(json.first?["payload_truncated"] == .bool(false))
    }

    @Test func bpfFilterAppliesToPcapAndIsRefusedForCaptures() throws {
        let pcap = TestEnvironment.path("Captures/pcap/websocket-plain.pcap")
        let all = try Self.lines([pcap])
        #expect(!all.isEmpty)
        #expect(try Self.lines([pcap, "--filter", "tcp"]).count == all.count)
        // A filter that keeps no WebSocket is said so, exit 2, not an empty green run.
        let none = try runFaultline(["frames", pcap, "--filter", "tcp port 1"])
        #expect(none.status == 2 && none.stdout.isEmpty && none.stderr.contains("no packet passed --filter 'tcp port 1'"), "\(none.stderr)")
        let bad = try runFaultline(["frames", pcap, "--filter", "tcp port"])
        #expect(bad.status == 2, "\(bad.stderr)")
        let capture = try runFaultline(["frames", try Self.capture(), "--filter", "tcp"])
        #expect(capture.status == 2 && capture.stderr.contains("--filter applies to pcap input only"))
    }

    @Test func followPrintsRecordsAppendedWhileRunning() throws {
        let path = try Self.capture(Array(Self.records().prefix(10)))
        let follow = try ChildProcess.faultline(["frames", path, "--follow", "--all"])
        defer { follow.stop() }
        #expect(follow.waitForLine(timeout: 60) { $0.contains("bird:subscribe") } != nil, "\(follow.output) \(follow.errorOutput)")
        // The proxy appends; a half-written line is not read until its newline comes.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        let line = RecordCoding.encode(.end(EndRecord(conn: 1, t: Self.us(3), side: .client, kind: .rst)))
        handle.write(Data(line.prefix(10)))
        handle.write(Data(line.dropFirst(10)))
        handle.write(Data(RecordCoding.encode(Self.text(1, 3.5, .server, #"{"event":"late"}"#))))
        try handle.close()
        #expect(follow.waitForLine(timeout: 60) { $0.contains("late") } != nil, "\(follow.output)")
        #expect(follow.output.contains { $0.hasSuffix("end     RST from client") })
        follow.signal(SIGINT)
        #expect(follow.waitForExit(timeout: 30) != nil)
    }
}
