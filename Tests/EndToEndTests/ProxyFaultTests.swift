import Capture
import Foundation
import JSON
import Testing
import TestSupport
import WebSocket

/// Every fault kind through real sockets: `faultline proxy --fault RULE` between the Python
/// Bird-style server and client of proxy_peers.py. Each test checks what the client received
/// and what the capture recorded.
@Suite(.serialized) struct ProxyFaultTests {
    static let ping = Bird.event("bird:ping")
    static let subscribe = Bird.event("bird:subscribe", data: #"{"channel":"orders"}"#)

    /// A rig with one fault rule, and the Bird client run against it with `clientArguments`.
    func run(fault: String, _ clientArguments: [String]) throws -> (client: [PeerLine], capture: CaptureContents, rig: ProxyRig) {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--fault", fault])
        let client = try rig.client(["--mode", "bird"] + clientArguments)
        let capture = try rig.stopProxy()
        #expect(capture.warnings.isEmpty)
        #expect(capture.header.settings["faults"] == .array([.string(fault)]))
        return (client, capture, rig)
    }

    @Test func closeSendsTheCodeAndReasonToTheClient() throws {
        let rule = "close:4009,reason=terminated,after=300ms"
        let (client, capture, _) = try run(fault: rule, ["--wait", "10"])
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["code"]?.intValue == 4009)
        #expect(closed["reason"]?.stringValue == "terminated")
        #expect(closed["by"]?.stringValue == "peer")
        let fault = try #require(capture.faults.first)
        #expect(fault.kind == "close" && fault.rule == rule && fault.target == .client && fault.conn == 1)
        let injected = try #require(capture.frames.first { $0.opcode == .close })
        #expect(injected.from == .server && injected.action == .injected && injected.fault == rule)
        #expect(injected.closeCode == 4009 && injected.closeReason == "terminated")
        // The client's reply is recorded and goes no further.
        let reply = try #require(capture.frames.last { $0.opcode == .close && $0.from == .client })
        #expect(reply.closeCode == 4009 && reply.action == .dropped)
    }

    @Test func stallPongsSwallowsTheServersPongs() throws {
        let (client, capture, rig) = try run(fault: "stall-pongs", ["--send", Self.ping, "--ping", "--wait", "2"])
        let received = client.received.compactMap(Bird.name)
        #expect(received == ["bird:connection_established"], "client: \(client)")
        #expect(client.of(kind: "no-pong").count == 1)
        #expect(client.of(kind: "still-open").count == 1)
        // The server did answer; the proxy dropped both kinds of pong.
        #expect(rig.server.output.map(PeerLine.init).received == [Self.ping])
        let eventPong = try #require(capture.frames.first { Bird.name($0.text ?? "") == "bird:pong" })
        #expect(eventPong.action == .dropped && eventPong.fault == "stall-pongs")
        let framePong = try #require(capture.frames.first { $0.opcode == .pong })
        #expect(framePong.from == .server && framePong.action == .dropped)
        #expect(capture.faults.first?.kind == "stall-pongs")
    }

    @Test func dropEndsBothSidesWithoutACloseFrame() throws {
        let (client, capture, _) = try run(fault: "drop,after=300ms", ["--wait", "10"])
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["by"]?.stringValue == "abnormal")
        #expect(closed["cause"]?.stringValue != "ConnectionResetError")
        #expect(capture.faults.map(\.kind) == ["drop"])
        #expect(!capture.frames.contains { $0.opcode == .close })
    }

    @Test func resetEndsBothSidesWithRST() throws {
        let (client, capture, _) = try run(fault: "reset,after=300ms", ["--wait", "10"])
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["by"]?.stringValue == "abnormal")
        #expect(closed["cause"]?.stringValue == "ConnectionResetError")
        #expect(capture.faults.map(\.kind) == ["reset"])
        #expect(!capture.frames.contains { $0.opcode == .close })
    }

    @Test func blackholeForwardsNothingAndKeepsSocketsOpen() throws {
        let rule = "blackhole,after=300ms"
        let (client, capture, rig) = try run(fault: rule, ["--delay", "0.8", "--send", Self.ping,
                                                           "--send", Self.subscribe, "--wait", "2"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established"], "client: \(client)")
        #expect(client.of(kind: "still-open").count == 1)
        #expect(rig.server.output.map(PeerLine.init).received.isEmpty)
        let sent = capture.frames.filter { $0.from == .client && $0.opcode == .text }
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.action == .dropped && $0.fault == rule })
        #expect(capture.faults.first?.kind == "blackhole")
    }

    @Test func latencyDelaysFramesAndKeepsTheirOrder() throws {
        let rule = "latency:400ms,dir=s2c"
        let (client, capture, _) = try run(fault: rule, ["--send", Self.ping, "--send", Self.subscribe, "--wait", "3"])
        #expect(client.received.compactMap(Bird.name)
                == ["bird:connection_established", "bird:pong", "bird_internal:subscription_succeeded"])
        let fromServer = capture.frames.filter { $0.from == .server && $0.opcode == .text }
        #expect(fromServer.count == 3)
        for frame in fromServer {
            guard case .delayed(let delay) = frame.action else {
                Issue.record("frame not delayed: \(frame.action)"); continue
            }
            #expect(delay >= 400_000)
        }
        #expect(capture.frames.filter { $0.from == .client && $0.opcode == .text }.allSatisfy { $0.action == .forwarded })
    }

    @Test func refuseHTTPAnswersTheUpgradeWithTheStatus() throws {
        let (client, capture, rig) = try run(fault: "refuse-http:503", [])
        let refused = try #require(client.of(kind: "refused").first, "client: \(client)")
        #expect(refused["status"]?.intValue == 503)
        #expect(capture.faults.map(\.kind) == ["refuse-http"])
        #expect(!capture.upgrades.contains { $0.from == .server })
        #expect(rig.server.output.map(PeerLine.init).received.isEmpty)
    }

    @Test func stripSocketIDRemovesItFromTheHandshake() throws {
        let (client, capture, _) = try run(fault: "strip-socket-id", ["--wait", "1"])
        let handshake = try #require(client.received.first)
        let data = try #require(Bird.data(handshake))
        #expect(data["socket_id"] == nil)
        #expect(data["activity_timeout"]?.intValue == 120)
        let records = capture.frames.filter { Bird.name($0.text ?? "") == "bird:connection_established" }
        #expect(records.map(\.action) == [.dropped, .injected])
        #expect(Bird.data(records.first?.text ?? "")?["socket_id"]?.stringValue == "123.456")
    }

    @Test func activityTimeoutRewritesTheHandshake() throws {
        let (client, capture, _) = try run(fault: "activity-timeout:5", ["--wait", "1"])
        let data = try #require(Bird.data(client.received.first ?? ""))
        #expect(data["activity_timeout"]?.intValue == 5)
        #expect(data["socket_id"]?.stringValue == "123.456")
        #expect(capture.frames.contains { $0.action == .injected && $0.fault == "activity-timeout:5" })
        #expect(capture.faults.first?.kind == "activity-timeout")
    }

    @Test func injectSendsACraftedFrame() throws {
        let payload = #"{"event":"bird:error","data":{"code":4009}}"#
        let rule = "inject:\(payload),to=client,after=300ms"
        let (client, capture, _) = try run(fault: rule, ["--wait", "2"])
        #expect(client.received.contains(payload), "client: \(client)")
        let injected = try #require(capture.frames.first { $0.action == .injected })
        #expect(injected.from == .server && injected.text == payload && injected.fault == rule)
        #expect(capture.faults.first?.kind == "inject")
    }
}
