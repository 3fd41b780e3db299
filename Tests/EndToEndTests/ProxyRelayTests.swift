import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport
import Vocabulary
import WebSocket

/// `faultline proxy` between a real Python `websockets` client and server: frame-exact
/// delivery both ways, close codes, refusals, resets, plain HTTP, SIGINT, backpressure.
@Suite(.serialized) struct ProxyRelayTests {
    /// The data frames each peer sends in the `script` exchange (see proxy_peers.py).
    static let large: [UInt8] = (0..<(1 << 20)).map { UInt8($0 % 251) }
    static let scriptFrames: [(Opcode, Bool, [UInt8])] = [
        (.text, true, Array("hello \u{2713} proxy".utf8)),
        (.binary, true, Array(0...255)),
        (.text, false, Array("frag-1 ".utf8)), (.continuation, false, Array("frag-2 ".utf8)),
        (.continuation, false, Array("frag-3".utf8)), (.continuation, true, []),
        (.binary, false, [0, 1]), (.continuation, false, [2, 3, 4]), (.continuation, true, []),
        (.binary, true, large),
    ]

    struct CloseCase: CustomTestStringConvertible, Sendable {
        var closer: Side
        var code: UInt16
        var reason: String
        var testDescription: String { "\(code) from \(closer.rawValue)" }
    }

    @Test(arguments: [
        CloseCase(closer: .client, code: 1000, reason: "done"),
        CloseCase(closer: .server, code: 1000, reason: ""),
        CloseCase(closer: .client, code: 4009, reason: "client says bye"),
        CloseCase(closer: .server, code: 4009, reason: "terminated"),
    ])
    func relaysEveryFrameExactlyBothWays(_ close: CloseCase) throws {
        let peerArguments = ["--closer", close.closer.rawValue, "--code", String(close.code), "--reason", close.reason]
        let rig = try ProxyRig(server: peerArguments)
        let client = try rig.client(peerArguments)
        // Both peers sent the same messages; each must have received them fragment for fragment.
        let clientMessages = client.of(kind: "message").map(\.raw)
        let server = rig.server.output.map(PeerLine.init)
        let serverMessages = server.of(kind: "message").map(\.raw)
        #expect(clientMessages.count == 5, "client got: \(client)")
        #expect(clientMessages == serverMessages)
        let fragmentCounts = client.of(kind: "message").map { $0["fragments"]?.arrayValue?.count ?? 0 }
        #expect(fragmentCounts == [1, 1, 4, 3, 1])
        #expect(client.of(kind: "message").first?["fragments"]?.arrayValue?.first?["text"]?.stringValue == "hello \u{2713} proxy")
        #expect(client.of(kind: "pong").count == 1)
        #expect(server.of(kind: "pong").count == 1)
        for (lines, isCloser) in [(client, close.closer == .client), (server, close.closer == .server)] {
            let closed = try #require(lines.of(kind: "closed").first, "no close reported: \(lines)")
            #expect(closed["code"]?.intValue == Int64(close.code))
            #expect(closed["reason"]?.stringValue == close.reason)
            #expect(closed["by"]?.stringValue == (isCloser ? "us" : "peer"))
        }

        let capture = try rig.stopProxy()
        #expect(capture.warnings.isEmpty)
        #expect(capture.header.source == "proxy")
        #expect(capture.header.settings["upstream"]?.stringValue == "ws://127.0.0.1:\(rig.serverPort)")
        #expect(capture.header.settings["listen"]?.stringValue == "127.0.0.1:\(rig.proxyPort)")
        // Record by record: open, upgrade request, upgrade response, then the frames, then the
        // TCP ends of both legs (notes aside: where the upstream leg runs).
        let records = capture.records.filter { if case .note = $0 { false } else { true } }
        guard case .open(let open) = records.first else { Issue.record("first record is not open"); return }
        #expect(open.conn == 1)
        #expect(open.server == "127.0.0.1:\(rig.proxyPort)")
        guard case .upgrade(let request) = records[1], case .upgrade(let response) = records[2] else {
            Issue.record("records 2 and 3 are not the upgrade"); return
        }
        #expect(request.from == .client && request.method == "GET" && request.target == "/app/test-key")
        #expect(response.from == .server && response.status == 101)
        let afterFrames = records.dropFirst(3).drop { if case .frame = $0 { true } else { false } }
        #expect(afterFrames.allSatisfy { if case .end = $0 { true } else { false } }, "\(afterFrames)")
        // After the close handshake: the proxy's FIN to each peer, and each peer's own end (its
        // FIN, or the capture's end if the proxy was stopped before it read it).
        let ends = Set(capture.ends.map { "\($0.leg?.rawValue ?? "-") \($0.side) \($0.kind == .captureEnd ? .fin : $0.kind)" })
        #expect(ends == ["client client fin", "client server fin", "upstream client fin", "upstream server fin"], "\(ends)")
        for side in Side.allCases {
            let frames = capture.frames.filter { $0.from == side }
            #expect(frames.allSatisfy { $0.masked == (side == .client) && $0.action == .forwarded && $0.protocolError == nil })
            let data = frames.filter { !$0.opcode.isControl }
            #expect(data.count == Self.scriptFrames.count)
            for (frame, expected) in zip(data, Self.scriptFrames) {
                // Frames over 256 KiB pass through as they arrive: recorded as their first
                // 4096 bytes, full length and SHA-256 (docs/capture-format.md).
                let passedThrough = expected.2.count > 256 << 10
                let digest = SHA256Digest()
                digest.update(expected.2)
                let payloadMatches = passedThrough
                    ? frame.payload == Array(expected.2.prefix(4096)) && frame.sha256 == digest.finish()
                    : frame.payload == expected.2 && frame.sha256 == nil
                #expect(frame.opcode == expected.0 && frame.fin == expected.1 && frame.length == expected.2.count && payloadMatches,
                        "\(side) frame \(frame.opcode) fin=\(frame.fin) len=\(frame.length)")
            }
            let pings = frames.filter { $0.opcode == .ping }.map { String(decoding: $0.payload, as: UTF8.self) }
            let pongs = frames.filter { $0.opcode == .pong }.map { String(decoding: $0.payload, as: UTF8.self) }
            #expect(pings == ["ping-from-\(side.rawValue)"])
            #expect(pongs == ["ping-from-\(side.other.rawValue)"])
            let closes = frames.filter { $0.opcode == .close }
            #expect(closes.count == 1)
            #expect(closes.first?.closeCode == close.code && closes.first?.closeReason == close.reason)
        }
        // The closer's close frame comes first.
        #expect(capture.frames.first { $0.opcode == .close }?.from == close.closer)
    }

    /// Transparent by default: a frame breaking RFC 6455 reaches the server (which closes
    /// with 1007 itself) and is recorded with the error noted; `--strict` stops it at the proxy.
    @Test(arguments: [false, true])
    func invalidUTF8IsRelayedUnlessStrict(strict: Bool) throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: strict ? ["--strict"] : [])
        let client = try rig.client(["--mode", "bad-utf8"])
        let close = try #require(client.of(kind: "close").first, "client: \(client)")
        #expect(close["code"]?.intValue == 1007)
        let capture = try rig.stopProxy()
        let bad = try #require(capture.frames.first { $0.from == .client && $0.opcode == .text })
        #expect(bad.payload == [0xFF, 0xFE])
        #expect(bad.protocolError != nil)
        #expect(bad.action == (strict ? .dropped : .forwarded))
        let closeFrame = try #require(capture.frames.first { $0.opcode == .close && $0.from == .server })
        #expect(closeFrame.action == (strict ? .injected : .forwarded))
    }

    @Test func relaysARefusedUpgradeAsIs() throws {
        let rig = try ProxyRig(server: ["--mode", "refuse"])
        let client = try rig.client()
        let refused = try #require(client.of(kind: "refused").first, "client: \(client)")
        #expect(refused["status"]?.intValue == 403)
        #expect(refused["body"]?.stringValue == "refused by the test server\n")
        let capture = try rig.stopProxy()
        let response = try #require(capture.upgrades.first { $0.from == .server })
        #expect(response.status == 403)
        #expect(capture.frames.isEmpty)
    }

    @Test func aServerThatVanishesWithRSTResetsTheClient() throws {
        let rig = try ProxyRig(server: ["--mode", "rst"])
        let client = try rig.client(["--mode", "bird", "--send", "hello", "--wait", "10"])
        // The client sees no close frame: an abnormal closure (1006 in websockets' terms).
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["by"]?.stringValue == "abnormal")
        #expect(client.of(kind: "still-open").isEmpty)
        let capture = try rig.stopProxy()
        let serverEnd = try #require(capture.ends.first { $0.side == .server })
        #expect(serverEnd.kind == .rst)
        #expect(capture.frames.contains { $0.from == .client && $0.text == "hello" })
        #expect(!capture.frames.contains { $0.opcode == .close })
    }

    @Test func sigintLeavesACompleteCapture() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"])
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/app/k", "--mode", "bird",
                                                              "--send", Bird.event("bird:ping"), "--wait", "60"])
        defer { client.stop() }
        #expect(client.waitForLine(timeout: 20) { $0.contains("bird:pong") } != nil, "no pong: \(client.output)")
        let capture = try rig.stopProxy()
        #expect(capture.warnings.isEmpty, "torn capture: \(capture.warnings)")
        #expect(capture.frames.map { Bird.name($0.text ?? "") } == ["bird:connection_established", "bird:ping", "bird:pong"])
        // The connection was still open: both sides end with capture-end records, last.
        let lastTwo = capture.records.suffix(2).compactMap { if case .end(let e) = $0 { e } else { nil } }
        #expect(Set(lastTwo.map(\.side)) == [.client, .server])
        #expect(lastTwo.allSatisfy { $0.kind == .captureEnd })
    }

    @Test func aPlainHTTPRequestGetsA4xx() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"])
        let client = try rig.client(["--mode", "get"])
        let reply = try #require(client.of(kind: "http").first, "client: \(client)")
        let status = try #require(reply["status"]?.intValue)
        #expect((400...499).contains(status))
        #expect(reply["body"]?.stringValue?.contains("WebSocket") == true)
        let capture = try rig.stopProxy()
        #expect(capture.upgrades.count == 1)
        #expect(capture.upgrades.first?.method == "GET")
    }

    /// One peer floods 1 MiB messages while the other never reads: the proxy must stop
    /// reading the flooder (so it stalls well short of its 500 MiB) and stay small.
    @Test(arguments: [Side.server, Side.client])
    func aPeerThatStopsReadingKeepsTheProxyBounded(flooder: Side) throws {
        let rig = try ProxyRig(server: ["--mode", flooder == .server ? "flood" : "hold"], record: false)
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/", "--mode",
                                                              flooder == .server ? "hold" : "flood"])
        defer { client.stop() }
        let flooding = flooder == .server ? rig.server : client
        #expect((flooder == .server ? client : rig.server).waitForLine(timeout: 20) { $0.contains("upgraded") } != nil)
        let flooded = try #require(flooding.waitForLine(timeout: 120) { $0.contains("flooded") },
                                   "the \(flooder) never stalled or finished")
        let line = PeerLine(flooded)
        let pushed = line["pushed"]?.intValue ?? 0
        #expect(line["stalled"]?.boolValue == true, "\(flooder) pushed \(pushed) bytes without stalling")
        #expect(pushed < 100 << 20)
        let rss = try #require(Self.residentKiB(pid: rig.proxy.pid))
        #expect(rss < 200 * 1024, "proxy RSS \(rss) KiB after the \(flooder) pushed \(pushed) bytes")
    }

    @Test func anUnreachableUpstreamGets502() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"])
        rig.server.stop()   // nothing listens on the upstream port any more
        let client = try rig.client(["--mode", "bird", "--wait", "2"])
        let refused = try #require(client.of(kind: "refused").first, "client: \(client)")
        #expect(refused["status"]?.intValue == 502)
        #expect(refused["body"]?.stringValue?.contains("connection refused") == true)
        let capture = try rig.stopProxy()
        let end = try #require(capture.ends.first)
        #expect(end.side == .server && end.kind == .error)
    }

    @Test func sigkillLeavesEveryCompleteLineReadable() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"])
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/app/k", "--mode", "bird",
                                                              "--send", Bird.event("bird:ping"), "--wait", "60"])
        defer { client.stop() }
        #expect(client.waitForLine(timeout: 20) { $0.contains("bird:pong") } != nil)
        // The writer flushes every 50 ms: wait (bounded) until the pong is on disk, then kill.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !((try? String(contentsOfFile: rig.capturePath, encoding: .utf8))?.contains("bird:pong") ?? false) {
            usleep(10_000)
        }
        rig.proxy.signal(SIGKILL)
        _ = rig.proxy.waitForExit(timeout: 10)
        let capture = try CaptureContents(path: rig.capturePath)
        #expect(capture.opens.count == 1)
        #expect(capture.frames.compactMap { Bird.name($0.text ?? "") }
                == ["bird:connection_established", "bird:ping", "bird:pong"])
    }

    /// VmRSS of a process in KiB, from /proc.
    static func residentKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}

/// The upstream request and several connections at once.
@Suite(.serialized) struct ProxyUpstreamTests {
    @Test func theUpstreamGetsThePathPrefixAndItsOwnHostHeader() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: [], upstreamPath: "/base/")
        let client = try rig.client(path: "/app/key?protocol=7", ["--mode", "bird", "--wait", "1"])
        #expect(client.received.count == 1)
        let connected = try #require(rig.server.output.map(PeerLine.init).of(kind: "connected").first)
        #expect(connected["path"]?.stringValue == "/base/app/key?protocol=7")
        #expect(connected["host"]?.stringValue == "127.0.0.1:\(rig.serverPort)")
        #expect(connected["agent"]?.stringValue?.contains("websockets") == true, "other headers pass as sent")
        let capture = try rig.stopProxy()
        let request = try #require(capture.upgrades.first)
        #expect(request.target == "/app/key?protocol=7")
        #expect(request.header("Host") == "127.0.0.1:\(rig.proxyPort)", "the capture keeps what the client sent")
    }

    @Test func concurrentConnectionsAreNumberedAndKeptApart() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"])
        let clients = try (1...5).map { index in
            try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/client/\(index)", "--mode", "bird",
                                                     "--send", "message from \(index)", "--wait", "2"])
        }
        for (index, client) in clients.enumerated() {
            #expect(client.waitForExit(timeout: 60) == 0)
            let echoed = client.output.map(PeerLine.init).received
            #expect(echoed.contains("message from \(index + 1)") && echoed.count == 2, "client \(index + 1): \(echoed)")
        }
        let capture = try rig.stopProxy()
        #expect(Set(capture.opens.map(\.conn)) == Set(1...5))
        for open in capture.opens {
            let target = try #require(capture.upgrades.first { $0.conn == open.conn && $0.from == .client }?.target)
            let index = try #require(target.split(separator: "/").last.map(String.init))
            let texts = capture.frames.filter { $0.conn == open.conn && $0.opcode == .text }.compactMap(\.text)
            #expect(texts.filter { $0.hasPrefix("message from") } == ["message from \(index)", "message from \(index)"])
        }
    }
}
