import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// Issue 17: what the proxy records, exports and concludes is what happened on the wire,
/// checked against real peers: tcpdump on loopback for the FIN or RST each peer saw, tshark
/// for `export --pcap`, and a plain Python `websockets` client for the `websocket` fallback.
@Suite(.serialized) struct WireFidelityTests {
    /// A tcpdump on `lo` for the given ports, line-buffered; stopped with SIGINT and read to
    /// its end.
    final class Tcpdump {
        let process: ChildProcess

        init(ports: [Int]) throws {
            let filter = "tcp and (" + ports.map { "port \($0)" }.joined(separator: " or ") + ")"
            // Through Python, which unblocks and resets SIGINT before becoming tcpdump (same
            // pid): a child of a Swift Testing test may inherit a blocked signal mask, and
            // tcpdump must see the SIGINT that stops it cleanly.
            let exec = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                + "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
            process = try ChildProcess(TestEnvironment.python, ["-c", exec, "/usr/bin/tcpdump", "-i", "lo", "-U", "-l", "-n", "-tt", "-S", filter])
            // tcpdump says "listening on lo" once its capture runs.
            try #require(process.waitForLine(timeout: 30, stderr: true) { $0.contains("listening on") } != nil,
                         "tcpdump did not start: \(process.errorOutput)")
        }

        /// One end seen: the port it came from and went to, and whether it was RST or FIN.
        struct End: Hashable { var from: Int; var to: Int; var kind: String }

        static func ends(in lines: [String]) -> [End] {
            lines.compactMap { line -> End? in
                // "1700000000.000001 IP 127.0.0.1.40000 > 127.0.0.1.8080: Flags [F.], seq 1, ..."
                guard let ip = line.range(of: " IP "), let colon = line.range(of: ": Flags [") else { return nil }
                let addresses = line[ip.upperBound..<colon.lowerBound].split(separator: " ")
                guard addresses.count == 3, let close = line[colon.upperBound...].firstIndex(of: "]") else { return nil }
                func port(_ s: Substring) -> Int? { s.split(separator: ".").last.flatMap { Int($0) } }
                let flags = line[colon.upperBound..<close]
                guard let from = port(addresses[0]), let to = port(addresses[2]) else { return nil }
                if flags.contains("R") { return End(from: from, to: to, kind: "rst") }
                if flags.contains("F") { return End(from: from, to: to, kind: "fin") }
                return nil
            }
        }

        /// The ends seen so far.
        var ends: [End] { Self.ends(in: process.output) }

        /// Waits (bounded) until `done` holds for the ends seen so far.
        func wait(timeout: Double = 30, until done: ([End]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if done(ends) { return true }
                usleep(20_000)
            }
            return done(ends)
        }

        /// SIGINT, then everything it printed (to end of file).
        func stop() -> [End] {
            process.signal(SIGINT)
            let status = process.waitForExit(timeout: 20)
            #expect(status == 0, "tcpdump did not stop on SIGINT: \(process.errorOutput)")
            if status == nil { process.stop() }
            return ends
        }
    }

    /// The end tcpdump saw in each direction of each leg, as the capture's words: "client
    /// leg, from server" is the proxy ending the client's connection. RST wins over FIN.
    static func seen(_ ends: [Tcpdump.End], proxyPort: Int, serverPort: Int) -> [String: String] {
        var result: [String: String] = [:]
        for end in ends {
            let key: String
            if end.from == proxyPort { key = "client leg, from server" }
            else if end.to == proxyPort { key = "client leg, from client" }
            else if end.from == serverPort { key = "upstream leg, from server" }
            else if end.to == serverPort { key = "upstream leg, from client" }
            else { continue }
            if result[key] != "rst" { result[key] = end.kind }
        }
        return result
    }

    /// The ends the capture records on the wire (capture-end is not on the wire), same keys.
    static func recorded(_ capture: CaptureContents) -> [String: String] {
        var result: [String: String] = [:]
        for end in capture.ends where end.kind != .captureEnd {
            guard let leg = end.leg else { continue }
            result["\(leg.rawValue) leg, from \(end.side.rawValue)"] = end.kind == .error ? "rst" : end.kind.rawValue
        }
        return result
    }

    /// Runs one scenario: proxy with `fault` between a Python server and client, tcpdump on
    /// both legs; waits for the ends `awaited` (keys as in `seen`), then compares every end
    /// recorded on the wire with what tcpdump saw.
    func check(fault: [String], server: [String] = ["--mode", "bird"], client: [String],
               awaited: [String: String]) throws -> (seen: [String: String], recorded: [String: String]) {
        let rig = try ProxyRig(server: server, proxy: fault)
        let dump = try Tcpdump(ports: [rig.proxyPort, rig.serverPort])
        defer { dump.process.stop() }
        _ = try rig.client(client)
        let complete = dump.wait { ends in
            let seen = Self.seen(ends, proxyPort: rig.proxyPort, serverPort: rig.serverPort)
            return awaited.allSatisfy { seen[$0.key] != nil }
        }
        let seen = Self.seen(dump.stop(), proxyPort: rig.proxyPort, serverPort: rig.serverPort)
        let capture = try rig.stopProxy()
        #expect(complete, "tcpdump saw \(seen), expected at least \(awaited)")
        let recorded = Self.recorded(capture)
        #expect(recorded == seen, "recorded \(recorded) but tcpdump saw \(seen)")
        for (key, kind) in awaited { #expect(seen[key] == kind, "\(key): tcpdump saw \(seen[key] ?? "nothing")") }
        return (seen, recorded)
    }

    /// A `drop` ends both connections with a clean FIN (the proxy drains what the peers still
    /// send before it closes, so no RST), and each peer's own FIN back is recorded too.
    @Test func dropIsAFinOnBothLegsAsRecorded() throws {
        _ = try check(fault: ["--fault", "drop,after=300ms"], client: ["--mode", "bird", "--wait", "10"],
                      awaited: ["client leg, from server": "fin", "client leg, from client": "fin",
                                "upstream leg, from client": "fin", "upstream leg, from server": "fin"])
    }

    @Test func resetIsAnRstOnBothLegsAsRecorded() throws {
        _ = try check(fault: ["--fault", "reset,after=300ms"], client: ["--mode", "bird", "--wait", "10"],
                      awaited: ["client leg, from server": "rst", "upstream leg, from client": "rst"])
    }

    /// A blackhole passes no end on: the client's FIN (after its close timed out) is
    /// recorded on its leg, and nothing is sent on the other.
    @Test func blackholeRecordsTheClientsEndOnlyWhereItHappened() throws {
        let result = try check(fault: ["--fault", "blackhole,after=300ms"],
                               client: ["--mode", "bird", "--ping", "--wait", "1"],
                               awaited: ["client leg, from client": "fin"])
        #expect(result.seen["upstream leg, from client"] == nil, "the blackhole passed the client's end on")
    }

    /// After a completed close handshake every TCP end on both legs is recorded (before, none was).
    @Test func theEndsAfterACloseHandshakeAreRecorded() throws {
        _ = try check(fault: [], server: ["--mode", "script"], client: ["--mode", "script", "--closer", "client"],
                      awaited: ["client leg, from server": "fin", "client leg, from client": "fin",
                                "upstream leg, from client": "fin", "upstream leg, from server": "fin"])
    }

    // MARK: export --pcap

    /// `export --pcap` after `stall-pongs`: two TCP conversations with the real addresses;
    /// the swallowed pongs appear only on the upstream leg, each with a comment naming the
    /// fault and "dropped"; tshark reads it all.
    @Test func exportShowsSwallowedPongsOnlyWhereTheyWent() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--fault", "stall-pongs"])
        let lines = try rig.client(["--mode", "bird", "--send", #"{"event":"bird:ping","data":{}}"#, "--ping", "--wait", "2"])
        #expect(lines.of(kind: "no-pong").count == 1, "\(lines)")
        let capture = try rig.stopProxy()
        #expect(capture.frames.contains { $0.action == .dropped && $0.fault == "stall-pongs" })
        let note = try #require(capture.records.compactMap { record -> String? in
            if case .note(let n) = record, n.message.hasPrefix("upstream leg: ") { n.message } else { nil }
        }.first)
        let upstreamLocal = try #require(Int(note.split(separator: " ")[2].split(separator: ":").last ?? ""))

        let pcap = TestEnvironment.temporaryDirectory("export-legs").appendingPathComponent("session.pcapng").path
        let export = try runFaultline(["export", rig.capturePath, "--pcap", pcap])
        #expect(export.status == 0, "\(export.stderr)")
        let tshark = try runCommand("/usr/bin/tshark", [
            "-r", pcap, "-d", "tcp.port==\(rig.proxyPort),http", "-d", "tcp.port==\(rig.serverPort),http",
            "-T", "fields", "-E", "separator=|", "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.dstport",
            "-e", "websocket.opcode", "-e", "websocket.payload.text", "-e", "frame.comment"], timeout: 60)
        #expect(tshark.status == 0, "\(tshark.stderr)")
        let rows = tshark.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        let streams = Set(rows.map { $0[0] })
        #expect(streams.count == 2, "two TCP conversations: \(streams)")
        let ports = Set(rows.map { Set([Int($0[1]) ?? 0, Int($0[2]) ?? 0]) })
        let clientPort = try #require(Int(capture.opens.first?.client.split(separator: ":").last ?? ""))
        #expect(ports == [[clientPort, rig.proxyPort], [upstreamLocal, rig.serverPort]], "\(ports)")

        let pongs = rows.filter { $0[4].contains("bird:pong") || $0[3] == "10" }
        #expect(pongs.count == 2, "the pong event and the pong frame: \(pongs)")
        for pong in pongs {
            #expect(pong[1] == String(rig.serverPort), "a swallowed pong on the client's leg: \(pong)")
            #expect(pong[5] == "faultline: dropped by fault stall-pongs: not passed on to the client", "\(pong)")
        }
        // Relayed frames appear on both legs, without comment.
        let pings = rows.filter { $0[4].contains("bird:ping") }
        #expect(Set(pings.map { $0[2] }) == [String(rig.proxyPort), String(rig.serverPort)], "\(pings)")
        #expect(pings.allSatisfy { $0[5].isEmpty })
    }

    // MARK: probes

    /// A load balancer's health check (a plain `GET /health`, no WebSocket upgrade) comes
    /// first; `conn=1` still picks the first real client, and the probe is recorded as one.
    @Test func aHealthCheckDoesNotTakeConnectionNumberOne() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--fault", "close:4009,conn=1,reason=first"])
        let probe = try RawHTTP.request("127.0.0.1:\(rig.proxyPort)", "GET", "/health")
        #expect(probe.status == 426)
        let lines = try rig.client(["--mode", "bird", "--wait", "10"])
        let closed = try #require(lines.of(kind: "closed").first, "\(lines)")
        #expect(closed["code"]?.intValue == 4009 && closed["reason"]?.stringValue == "first")
        let capture = try rig.stopProxy()
        let notes = capture.records.compactMap { record -> NoteRecord? in if case .note(let n) = record { n } else { nil } }
        #expect(notes.contains { $0.conn == 1 && $0.message.hasPrefix("probe: ") }, "\(notes)")
        #expect(capture.faults.map(\.conn) == [2])
    }

    // MARK: the websocket fallback

    /// A plain WebSocket app (Python `websockets`, no Bird events) analyzed with the default
    /// spec: connected on its 101, analyzed at connection level, and the report says so.
    @Test func aPlainWebSocketClientIsAnalyzedAtConnectionLevel() throws {
        let rig = try ProxyRig(server: ["--mode", "script"])
        let lines = try rig.client(["--mode", "script", "--closer", "client"])
        #expect(lines.of(kind: "closed").first?["code"]?.intValue == 1000, "\(lines)")
        _ = try rig.stopProxy()
        let report = try runFaultline(["analyze", rig.capturePath])
        #expect(report.status == 0, "\(report.stdout)\n\(report.stderr)")
        #expect(report.stdout.contains("warning: client-1: no bird events seen; analyzed at connection level"), "\(report.stdout)")
        #expect(report.stdout.contains("connecting -> connected  (upgrade 101 (no protocol events: connection level))"), "\(report.stdout)")
        #expect(report.stdout.contains("connected -> disconnected  (close 1000 from client)"), "\(report.stdout)")
        #expect(report.stdout.contains("  findings: none\n"), "\(report.stdout)")
    }
}
