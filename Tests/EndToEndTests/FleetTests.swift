import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// A fleet behind a real load balancer: three `faultline proxy` replicas behind HAProxy
/// (round-robin) in front of `faultline sim server`. Faults drop the sim clients, so their
/// reconnects land on other replicas; `analyze --merge` of the three captures must tell the
/// same story as one proxy recording the same scenario with the same seed.
@Suite(.serialized) struct FleetTests {
    /// The scenario: two sim clients (the deliberate `reuse-auth` bug on), each connection
    /// closed 4200 after 1 s by the proxy, so each client reconnects at once, three times.
    static let faults = ["--fault", "close:4200,after=1s"]
    static let clientArguments = ["--channels", "news,private-chat", "--seed", "7", "--clients", "2", "--bug", "reuse-auth",
                                  "--backoff-base", "100ms", "--duration", "3.6s"]

    /// What one client's story is, independent of connection numbers and replicas.
    struct Story: Equatable, CustomStringConvertible {
        var connections: Int
        var findings: [String]
        var description: String { "\(connections) connections, findings \(findings)" }
    }

    /// The report of `analyze` (JSON) on what `record` captured of the scenario.
    static func run(through balancer: (_ serverPort: Int) throws -> (port: Int, finish: () throws -> [String]),
                    merge: Bool) throws -> (report: JSONValue, captures: [String]) {
        let (server, serverPort) = try ProxySimTests.simServer()
        defer { server.stop() }
        let (port, finish) = try balancer(serverPort)
        let client = try ChildProcess.faultline(["sim", "client", "--url", "ws://127.0.0.1:\(port)/app/sim-key"] + clientArguments)
        defer { client.stop() }
        #expect(client.waitForExit(timeout: 60) == 0, "sim client: \(client.errorOutput)")
        let captures = try finish()
        let run = try runFaultline(["analyze"] + captures + (merge ? ["--merge"] : []) + ["--app-secret", "sim-secret", "--format", "json"])
        #expect(run.status == 1, "the reuse-auth bug makes errors: \(run.stderr)")
        return (try JSONParser.parse(run.stdout), captures)
    }

    static func single() throws -> JSONValue {
        try run(through: { serverPort in
            let (proxy, port, capture) = try ProxySimTests.proxy(upstreamPort: serverPort, faults)
            return (port, { _ = try stopRecordingProxy(proxy, capture: capture); return [capture] })
        }, merge: false).report
    }

    static func fleet(clockOffsets: [Int: String] = [:]) throws -> (report: JSONValue, captures: [String]) {
        try run(through: { serverPort in
            let fleet = try ProxyFleet(count: 3, upstreamPort: serverPort, arguments: faults, clockOffsets: clockOffsets)
            let balancer = try HAProxy(backends: fleet.ports)
            return (balancer.port, {
                try fleet.stop()
                balancer.process.stop()
                return fleet.captures
            })
        }, merge: true)
    }

    /// Each client's story, by its grouping key (the sim gives each client its own User-Agent).
    static func stories(_ report: JSONValue) -> [String: Story] {
        var stories: [String: Story] = [:]
        let findings = report["findings"]?.arrayValue ?? []
        for client in report["clients"]?.arrayValue ?? [] {
            guard let id = client["id"]?.stringValue, let key = client["key"]?.stringValue else { continue }
            stories[key] = Story(connections: client["connections"]?.arrayValue?.count ?? 0,
                                 findings: findings.filter { $0["client"]?.stringValue == id }.compactMap { $0["rule"]?.stringValue }.sorted())
        }
        return stories
    }

    /// The merged report agrees with the single proxy's, client by client, and shows the hops.
    static func expectSameStory(_ merged: JSONValue, as single: JSONValue) throws {
        let expected = stories(single)
        try #require(expected.count == 2, "the single proxy saw the two clients: \(expected)")
        #expect(expected.values.allSatisfy { $0.connections == 4 && $0.findings.contains("channels.stale-auth") }, "\(expected)")
        // No vanished clients, no spurious new ones: the same keys, each with the same story.
        #expect(stories(merged) == expected)
        for client in merged["clients"]?.arrayValue ?? [] {
            let replicas = (client["connections"]?.arrayValue ?? []).compactMap { $0["replica"]?.stringValue }
            #expect(replicas.count == 4 && Set(replicas).count >= 2, "round-robin moved the client between replicas: \(replicas)")
            // The deliberate bug is caught across a hop: a connection on another replica reuses the first one's auth.
            let id = client["id"]?.stringValue
            let stale = (merged["findings"]?.arrayValue ?? []).filter { $0["client"]?.stringValue == id && $0["rule"]?.stringValue == "channels.stale-auth" }
            let replicaOf = Dictionary(uniqueKeysWithValues: (client["connections"]?.arrayValue ?? []).compactMap { c in
                c["conn"]?.intValue.flatMap { conn in c["replica"]?.stringValue.map { (conn, $0) } }
            })
            #expect(stale.contains { $0["conn"]?.intValue.flatMap { replicaOf[$0] } != replicas.first }, "stale auth on another replica than the first: \(stale)")
        }
    }

    static func corrections(_ report: JSONValue) -> [String] {
        (report["warnings"]?.arrayValue ?? []).compactMap(\.stringValue).filter { $0.contains("clock corrected") }
    }

    @Test func aMergedFleetTellsTheSameStoryAsOneProxy() throws {
        let single = try Self.single()
        let (merged, captures) = try Self.fleet()
        try Self.expectSameStory(merged, as: single)
        #expect(Self.corrections(merged).isEmpty, "clocks that agree need no correction: \(Self.corrections(merged))")
        // Read apart, as before --merge, the same captures lose the clients' stories.
        let apart = try runFaultline(["analyze"] + captures + ["--app-secret", "sim-secret", "--format", "json"])
        let apartClients = try JSONParser.parse(apart.stdout)["clients"]?.arrayValue ?? []
        #expect(apartClients.count > 2 && apartClients.allSatisfy { ($0["connections"]?.arrayValue?.count ?? 0) < 4 },
                "each replica's part of a client is a client of its own: \(apartClients.count) clients")
        // frames --merge: every frame of the three captures once, in time order, each naming its replica.
        let frames = try runFaultline(["frames", "--merge", "--format", "json"] + captures)
        #expect(frames.status == 0, "\(frames.stderr)")
        let lines = try frames.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        let recorded = try captures.map { try CaptureContents(path: $0).frames.count }.reduce(0, +)
        #expect(lines.count == recorded)
        #expect(Set(lines.compactMap { $0["replica"]?.stringValue }) == ["r1", "r2", "r3"])
        #expect(lines.allSatisfy { $0["replica"]?.stringValue != nil })
        let times = lines.compactMap { $0["t"]?.doubleValue }
        #expect(times.count == lines.count && times == times.sorted())
        // Every report format names each connection's replica; a lone capture that names its replica too.
        let text = try runFaultline(["analyze", "--merge"] + captures)
        #expect(text.stdout.range(of: #"connections: \d+@r\d, \d+@r\d"#, options: .regularExpression) != nil, "\(text.stdout)")
        let junit = try runFaultline(["analyze", "--merge", "--format", "junit"] + captures)
        #expect(junit.stdout.range(of: #"<property name="connections" value="\d+@r\d, "#, options: .regularExpression) != nil)
        let html = try runFaultline(["analyze", "--merge", "--format", "html"] + captures)
        #expect(html.stdout.contains(" on replica r2") && html.stdout.range(of: #">#\d+@r1</text>"#, options: .regularExpression) != nil)
        let alone = try runFaultline(["analyze", captures[0]])
        #expect(alone.stdout.range(of: #"connections: \d+@r1"#, options: .regularExpression) != nil, "\(alone.stdout)")
        // export --merge: one pcapng with every replica's conversations, both legs each.
        let directory = TestEnvironment.temporaryDirectory("faultline-fleet-export")
        func packets(_ inputs: [String], merge: Bool) throws -> Int? {
            let out = directory.appendingPathComponent("\(UInt32.random(in: 0 ... .max)).pcapng").path
            let run = try runFaultline(["export"] + (merge ? ["--merge"] : []) + inputs + ["--pcap", out])
            #expect(run.status == 0, "\(run.stderr)")
            return run.stderr.split(separator: " ").firstIndex(of: "packets,").flatMap { i in Int(run.stderr.split(separator: " ")[i - 1]) }
        }
        let apartPackets = try captures.map { try packets([$0], merge: false) ?? -1 }.reduce(0, +)
        #expect(try packets(captures, merge: true) == apartPackets)
    }

    @Test func aReplicaWhoseClockIs30msAheadIsCorrectedAndTheStoryHolds() throws {
        let single = try Self.single()
        let (merged, captures) = try Self.fleet(clockOffsets: [1: "30ms"])
        try Self.expectSameStory(merged, as: single)
        // r2 reads 30 ms late: a client it dropped reconnects (at once) on r1 or r3 "before"
        // the drop. The merge moves the others after it, by no more than the true 30 ms.
        let corrections = Self.corrections(merged)
        #expect(corrections.contains { $0.contains("behind r2's") } && !corrections.contains { $0.hasPrefix("merge: r2's") },
                "\(corrections)")
        for line in corrections {
            let ms = line.split(separator: "+").last?.split(separator: " ").first.flatMap { Double($0) }
            #expect(ms.map { $0 > 0 && $0 <= 30.001 } == true, "\(line)")
        }
        // Skew beyond --max-skew is refused, naming the replicas.
        let refused = try runFaultline(["analyze"] + captures + ["--merge", "--max-skew", "1ms"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--max-skew 1.0 ms") && refused.stderr.contains("r2"), "\(refused.stderr)")
    }

    @Test func ctlFanOutCloses4009OnOneClientThroughTheReplicaThatHoldsIt() throws {
        let (server, serverPort) = try ProxySimTests.simServer()
        defer { server.stop() }
        let fleet = try ProxyFleet(count: 3, upstreamPort: serverPort, arguments: [], control: true)
        let balancer = try HAProxy(backends: fleet.ports)
        let client = try ChildProcess.faultline(["sim", "client", "--url", "ws://127.0.0.1:\(balancer.port)/app/sim-key",
                                                 "--channels", "news", "--seed", "7", "--clients", "2", "--duration", "30s"])
        defer { client.stop() }
        for n in 1...2 {
            #expect(client.waitForLine(timeout: 20) { $0.hasPrefix("client \(n): connecting -> connected") } != nil, "client \(n) connected")
        }
        let proxies = fleet.controls.flatMap { ["--proxy", $0] }
        // --proxies FILE: one address a line, comments and blank lines ignored.
        let file = TestEnvironment.temporaryDirectory("faultline-fleet-ctl").appendingPathComponent("fleet.txt")
        try ("# the fleet\n\n" + fleet.controls.map { "http://\($0)  # a replica\n" }.joined()).write(to: file, atomically: true, encoding: .utf8)
        let listed = try runFaultline(["ctl", "--proxies", file.path, "connections"])
        #expect(listed.status == 0 && listed.stdout.hasPrefix("PROXY"), "\(listed.stderr)")
        let watch = try ChildProcess.faultline(["ctl"] + proxies + ["watch"])
        defer { watch.stop() }
        // Until each replica's stream is live, a bare TCP connection to it (no upgrade) shows
        // up in the merged stream as connection-opened from that proxy: then none is missed.
        for (port, control) in zip(fleet.ports, fleet.controls) {
            let deadline = Date().addingTimeInterval(20)
            var live = false
            while !live && Date() < deadline {
                _ = try? RawSocket(port: port, receiveTimeout: 1)
                live = watch.waitForLine(timeout: 0.5) { $0.contains("\"proxy\":\"\(control)\"") && $0.contains("connection-opened") } != nil
            }
            #expect(live, "watch of \(control) never became live: \(watch.output) \(watch.errorOutput)")
        }
        #expect(listed.stdout.split(separator: "\n").count == 3, "both clients' connections, merged: \(listed.stdout)")

        let applied = try runFaultline(["ctl"] + proxies + ["apply", "client=(client 1)", "close:4009,reason=terminated"])
        #expect(applied.status == 0, "\(applied.stderr)")
        let holder = try #require(fleet.controls.firstIndex { applied.stdout.hasPrefix($0) }, "the answer names the replica: \(applied.stdout)")
        #expect(applied.stdout.split(separator: "\n").count == 1)
        // The merged event stream shows the fault, from the replica that fired it.
        let event = watch.waitForLine(timeout: 20) { $0.contains("\"fault\"") && $0.contains("4009") }
        #expect(event?.contains("\"proxy\":\"\(fleet.controls[holder])\"") == true, "watch: \(watch.output)")
        let failed = client.waitForLine(timeout: 20) { $0.hasPrefix("client 1:") && $0.contains("-> failed") }
        #expect(failed?.contains("4009") == true, "client: \(client.output)")
        #expect(!client.output.contains { $0.hasPrefix("client 2:") && $0.contains("-> failed") })

        // A replica that does not answer is named, and the exit status says so.
        let dead = "127.0.0.1:\(TestEnvironment.freePort())"
        let partial = try runFaultline(["ctl", "--proxy", fleet.controls[0], "--proxy", dead, "health"])
        #expect(partial.status == 1)
        #expect(partial.stdout.contains("\(fleet.controls[0])  ok"), "\(partial.stdout)")
        #expect(partial.stderr.contains("\(dead) did not answer"), "\(partial.stderr)")

        let badFile = file.deletingLastPathComponent().appendingPathComponent("bad.txt")
        try "127.0.0.1:1\nnot an address/x\n".write(to: badFile, atomically: true, encoding: .utf8)
        let bad = try runFaultline(["ctl", "--proxies", badFile.path, "health"])
        #expect(bad.status == 2 && bad.stderr.contains("bad.txt:2"), "\(bad.stderr)")

        client.stop()
        try fleet.stop()
        // The replicas ended their streams: watch ends too, with every replica having answered.
        #expect(watch.waitForExit(timeout: 20) == 0, "\(watch.errorOutput)")
        for (i, path) in fleet.captures.enumerated() {
            let closes = try CaptureContents(path: path).frames.filter { $0.closeCode == 4009 && $0.action == .injected }
            #expect(closes.count == (i == holder ? 1 : 0), "replica r\(i + 1): \(closes.count) injected 4009")
        }
    }

    @Test func mergeRefusesWhatItCannotRead() throws {
        let (_, captures) = (0, [TestEnvironment.path("Captures/backoff-bound.jsonl")])
        let one = try runFaultline(["analyze", "--merge"] + captures)
        #expect(one.status == 2 && one.stderr.contains("--merge needs the captures of two replicas or more"), "\(one.stderr)")
        let piped = try runFaultline(["analyze", "--merge", "-", captures[0]])
        #expect(piped.status == 2 && piped.stderr.contains("needs files: '<stdin>'"), "\(piped.stderr)")
        let stray = try runFaultline(["analyze", "--max-skew", "1s"] + captures)
        #expect(stray.status == 2 && stray.stderr.contains("--max-skew applies to --merge only"), "\(stray.stderr)")
    }
}
