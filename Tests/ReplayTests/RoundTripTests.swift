import Bird
import Capture
import Foundation
import JSON
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Replay

/// The issue's main test: record a sim client and sim server through `faultline proxy`,
/// replay the capture as the server to a sim client and as the client to a sim server,
/// each recorded through the proxy again, and check that the three captures agree frame by
/// frame (each direction of each connection) modulo the ignored and mapped fields, and
/// that the analyzer sees the same lifecycle in all three.
@Suite(.serialized) struct RoundTripTests {
    /// The sim server closes every connection with 4200 after 1 s, so a 2.5 s sim client
    /// makes three connections: two told to reconnect, the third closed by the client.
    static let simServer = ["sim", "server", "--listen", "127.0.0.1:0", "--event-interval", "0",
                            "--close-after", "1s", "--close-code", "4200"]
    static let simClientDuration = "2.5s"

    func address(_ process: ChildProcess, _ what: String) throws -> String {
        let line = try #require(process.waitForLine(timeout: 20) { $0.hasPrefix("listening on ") },
                                "\(what) did not listen: \(process.errorOutput)")
        return String(line.dropFirst("listening on ".count))
    }

    /// Runs `body` with a proxy recording to `capture` in front of `upstream`; stops the
    /// proxy with SIGINT (which completes the capture) afterwards.
    func throughProxy(to upstream: String, recording capture: String, _ body: (String) throws -> Void) throws {
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://\(upstream)", "--record", capture])
        defer { proxy.stop() }
        try body(try address(proxy, "proxy"))
        proxy.signal(SIGINT)
        #expect(proxy.waitForExit(timeout: 10) == 0, "proxy: \(proxy.errorOutput)")
    }

    func runSimClient(_ url: String) throws {
        let client = try runFaultline(["sim", "client", "--url", url, "--duration", Self.simClientDuration], timeout: 30)
        #expect(client.status == 0, "sim client: \(client.stdout) \(client.stderr)")
    }

    /// Each connection's frames, per direction, control frames left out.
    func frames(_ path: String) throws -> [[Side: [FrameRecord]]] {
        var reader = try CaptureReader(path: path)
        var byConn: [ConnectionID: [Side: [FrameRecord]]] = [:]
        while let record = try reader.nextRecord() {
            guard case .frame(let frame) = record, frame.opcode != .ping, frame.opcode != .pong else { continue }
            byConn[frame.conn, default: [:]][frame.from, default: []].append(frame)
        }
        return byConn.keys.sorted().map { byConn[$0]! }
    }

    /// Where two captures disagree, modulo the Bird defaults; empty when they agree.
    func disagreements(_ original: String, _ replayed: String) throws -> [String] {
        let a = try frames(original), b = try frames(replayed)
        guard a.count == b.count else { return ["\(b.count) connections (recorded \(a.count))"] }
        var problems: [String] = []
        for (index, (left, right)) in zip(a, b).enumerated() {
            var matcher = FrameMatcher(rules: MatchRules(BirdDecoder.volatileFields))
            for side in [Side.server, .client] {
                let x = left[side] ?? [], y = right[side] ?? []
                if x.count != y.count {
                    problems.append("conn \(index + 1) \(side): \(y.count) frames (recorded \(x.count))")
                }
                for (recorded, seen) in zip(x, y) {
                    let comparison = matcher.compare(recordedOpcode: recorded.opcode, recorded.payload,
                                                     observedOpcode: seen.opcode, seen.payload)
                    matcher.commit(comparison)
                    if comparison.verdict != .same {
                        problems.append("conn \(index + 1) \(side): \(Deviation.summary(seen)) vs recorded \(Deviation.summary(recorded)): \(comparison.verdict)")
                    }
                }
            }
        }
        return problems
    }

    @Test func recordReplayBothWaysRecordAgainAndTheCapturesAgree() throws {
        let directory = TestEnvironment.temporaryDirectory("replay-roundtrip")
        let original = directory.appendingPathComponent("original.jsonl").path
        let asServer = directory.appendingPathComponent("replayed-as-server.jsonl").path
        let asClient = directory.appendingPathComponent("replayed-as-client.jsonl").path

        // 1. Record: sim client -> proxy -> sim server.
        do {
            let server = try ChildProcess.faultline(Self.simServer)
            defer { server.stop() }
            let upstream = try address(server, "sim server")
            try throughProxy(to: upstream, recording: original) { proxy in
                try runSimClient("ws://\(proxy)/app/sim-key")
            }
        }
        let recorded = try frames(original)
        #expect(recorded.count == 3, "expected a reconnect story of three connections")
        #expect(recorded.first?[.client]?.contains { Deviation.summary($0) == "text bird:subscribe" } == true)

        // 2. Replay as the server: sim client -> proxy -> faultline replay --listen.
        do {
            let replay = try ChildProcess.faultline(["replay", original, "--listen", "127.0.0.1:0"])
            defer { replay.stop() }
            let upstream = try address(replay, "replay")
            try throughProxy(to: upstream, recording: asServer) { proxy in
                try runSimClient("ws://\(proxy)/app/sim-key")
                #expect(replay.waitForExit(timeout: 20) == 0, "replay as server: \(replay.output)")
                #expect(replay.output.last == "replayed 3 connections as the server (3 recorded): no differences")
            }
        }

        // 3. Replay as the client: faultline replay --upstream -> proxy -> sim server. The
        // sim server checks channel signatures, so the replay re-signs them.
        do {
            let server = try ChildProcess.faultline(Self.simServer)
            defer { server.stop() }
            let upstream = try address(server, "sim server")
            try throughProxy(to: upstream, recording: asClient) { proxy in
                let replay = try runFaultline(["replay", original, "--upstream", "ws://\(proxy)", "--app-secret", "sim-secret"], timeout: 60)
                #expect(replay.status == 0, "replay as client: \(replay.stdout) \(replay.stderr)")
                #expect(replay.stdout == "replayed 3 connections as the client (3 recorded): no differences")
            }
        }

        // 4. The recordings of both replays agree with the original, frame by frame.
        #expect(try disagreements(original, asServer) == [])
        #expect(try disagreements(original, asClient) == [])

        // 5. And the analyzer sees the same lifecycle in all three: the same state changes,
        // the same closes, the same findings.
        let expected = try analysis(original)
        #expect(expected.closes == ["4200 by server", "4200 by server", "1000 by client"])
        #expect(try analysis(asServer) == expected)
        #expect(try analysis(asClient) == expected)
    }

    struct Analysis: Equatable {
        var states: [String]
        var closes: [String]
        var findings: [String]
    }

    /// What `faultline analyze --format json` says about a capture, times left out.
    func analysis(_ path: String) throws -> Analysis {
        let run = try runFaultline(["analyze", path, "--format", "json"], timeout: 60)
        #expect(run.status == 0 || run.status == 1, "analyze \(path): \(run.stderr)")
        let report = try JSONParser.parse(run.stdout)
        let states = (report["transitions"]?.arrayValue ?? []).map { ($0["to"]?.stringValue ?? "?") }
        let closes = (report["clients"]?.arrayValue ?? []).flatMap { $0["connections"]?.arrayValue ?? [] }.map {
            "\($0["close_code"]?.intValue.map(String.init) ?? "none") by \($0["closed_by"]?.stringValue ?? "?")"
        }
        let findings = (report["findings"]?.arrayValue ?? []).map { ($0["rule"]?.stringValue ?? JSONWriter.serialize($0)) }.sorted()
        return Analysis(states: states, closes: closes, findings: findings)
    }
}

