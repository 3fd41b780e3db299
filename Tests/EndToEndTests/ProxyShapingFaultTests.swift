import Capture
import Foundation
import JSON
import Testing
import TestSupport
import WebSocket

/// The toxiproxy-like and message-level kinds through real sockets: `faultline proxy
/// --fault RULE` between the Python peers of proxy_peers.py. Each test checks what the
/// Python client received (its `websockets` library parses every frame) and what the
/// capture recorded; timings are asserted only as lower bounds.
@Suite(.serialized) struct ProxyShapingFaultTests {
    static let ping = Bird.event("bird:ping")
    static let subscribe = Bird.event("bird:subscribe", data: #"{"channel":"orders"}"#)

    func run(fault: String, server: [String] = ["--mode", "bird"], _ clientArguments: [String]) throws
        -> (client: [PeerLine], capture: CaptureContents) {
        let rig = try ProxyRig(server: server, proxy: ["--fault", fault])
        let client = try rig.client((server.contains("bird") ? ["--mode", "bird"] : []) + clientArguments)
        let capture = try rig.stopProxy()
        #expect(capture.warnings.isEmpty)
        return (client, capture)
    }

    @Test func fragmentArrivesAsContinuationFramesTheClientReassembles() throws {
        let (client, capture) = try run(fault: "fragment:3,dir=s2c", server: ["--mode", "script", "--closer", "server"],
                                        ["--mode", "script", "--closer", "server"])
        let messages = client.of(kind: "message")
        #expect(messages.count == 5, "client: \(client)")
        // Whole messages came as 3 frames; the ones already fragmented came as they were sent
        // (websockets ends a fragmented message with an empty final frame: 3 + 1 and 2 + 1).
        #expect(messages.map { $0["fragments"]?.arrayValue?.count ?? 0 } == [3, 3, 4, 3, 3])
        let text = messages.first?["fragments"]?.arrayValue?.compactMap { $0["text"]?.stringValue }.joined()
        #expect(text == "hello \u{2713} proxy")
        #expect(client.of(kind: "closed").first?["by"]?.stringValue == "peer")
        let continuations = capture.frames.filter { $0.from == .server && $0.opcode == .continuation && $0.action == .injected }
        #expect(continuations.count == 6)
    }

    @Test func slicedFramesArriveWhole() throws {
        let (client, capture) = try run(fault: "slicer,size=7,variation=3,delay=1ms,dir=s2c",
                                        ["--send", Self.ping, "--send", Self.subscribe, "--wait", "2"])
        #expect(client.received.compactMap(Bird.name)
                == ["bird:connection_established", "bird:pong", "bird_internal:subscription_succeeded"], "client: \(client)")
        // Each frame is recorded once, when its last piece went out.
        let fromServer = capture.frames.filter { $0.from == .server && $0.opcode == .text }
        #expect(fromServer.count == 3)
        #expect(capture.faults.first?.kind == "slicer")
    }

    @Test func duplicateDeliversTheMessageTwice() throws {
        let (client, capture) = try run(fault: "duplicate,event=bird:pong", ["--send", Self.ping, "--wait", "2"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established", "bird:pong", "bird:pong"],
                "client: \(client)")
        let pongs = capture.frames.filter { Bird.name($0.text ?? "") == "bird:pong" }
        #expect(pongs.map(\.action) == [.forwarded, .injected])
    }

    @Test func reorderSwapsTheMatchedMessageWithTheNext() throws {
        let (client, _) = try run(fault: "reorder,event=bird:pong", ["--send", Self.ping, "--send", Self.subscribe, "--wait", "2"])
        #expect(client.received.compactMap(Bird.name)
                == ["bird:connection_established", "bird_internal:subscription_succeeded", "bird:pong"], "client: \(client)")
    }

    @Test func rewriteChangesAFieldOfTheHandshake() throws {
        let rule = #"rewrite:data.socket_id="999.1",event=bird:connection_established"#
        let (client, capture) = try run(fault: rule, ["--wait", "1"])
        let data = try #require(Bird.data(client.received.first ?? ""), "client: \(client)")
        #expect(data["socket_id"]?.stringValue == "999.1")
        #expect(data["activity_timeout"]?.intValue == 120)
        let records = capture.frames.filter { Bird.name($0.text ?? "") == "bird:connection_established" }
        #expect(records.map(\.action) == [.dropped, .injected])
    }

    @Test func limitDataEndsTheConnectionWithoutACloseFrame() throws {
        // The handshake is 107 bytes and the pong 36: the pong would pass the limit.
        let (client, capture) = try run(fault: "limit-data:120,dir=s2c", ["--send", Self.ping, "--wait", "10"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established"], "client: \(client)")
        #expect(client.of(kind: "closed").first?["by"]?.stringValue == "abnormal")
        #expect(!capture.frames.contains { $0.opcode == .close })
        #expect(capture.faults.contains { $0.detail.hasPrefix("limit of 120 bytes reached") })
    }

    @Test func timeoutSwallowsThenCloses() throws {
        let (client, capture) = try run(fault: "timeout:300ms,frames=1", ["--send", Self.ping, "--wait", "10"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established"], "client: \(client)")
        #expect(client.of(kind: "closed").first?["by"]?.stringValue == "abnormal")
        let kinds = capture.faults.map(\.detail)
        #expect(kinds.first == "forwarding nothing; closing in 300ms")
        #expect(kinds.last == "timed out after 300ms: ended both connections with FIN")
    }

    @Test func slowCloseHoldsTheClosingHandshake() throws {
        let (client, capture) = try run(fault: "slow-close:400ms,dir=s2c", server: ["--mode", "script", "--closer", "server"],
                                        ["--mode", "script", "--closer", "server"])
        #expect(client.of(kind: "closed").first?["by"]?.stringValue == "peer", "client: \(client)")
        let close = try #require(capture.frames.first { $0.from == .server && $0.opcode == .close })
        guard case .delayed(let held) = close.action else {
            Issue.record("server close not held: \(close.action)")
            return
        }
        #expect(held >= 400_000)
    }

    @Test func bandwidthSpacesTheServersFrames() throws {
        // 1KB/s: the 107-byte handshake takes at least 107 ms to cross.
        let (client, capture) = try run(fault: "bandwidth:1KB/s,dir=s2c", ["--send", Self.ping, "--wait", "2"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established", "bird:pong"], "client: \(client)")
        let handshake = try #require(capture.frames.first { $0.from == .server })
        guard case .delayed(let held) = handshake.action else {
            Issue.record("handshake not delayed: \(handshake.action)")
            return
        }
        #expect(held >= 107_000)
        #expect(capture.frames.filter { $0.from == .client && $0.opcode == .text }.allSatisfy { $0.action == .forwarded })
    }
}
