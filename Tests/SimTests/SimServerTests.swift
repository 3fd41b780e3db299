import Bird
import JSON
import Sim
import Testing
import WebSocket

/// The server machine driven by hand, one or two connections at a time.
@Suite struct SimServerTests {
    static func server(_ change: (inout SimServerSettings) -> Void = { _ in }) -> SimServer {
        var settings = SimServerSettings()
        settings.eventInterval = nil
        change(&settings)
        return SimServer(settings: settings, seed: 3)
    }

    /// Messages sent to `connection` among `commands`.
    static func messages(_ commands: [SimServerCommand], to connection: SimConnectionID) -> [BirdMessage] {
        commands.compactMap { if case .send(connection, let frame) = $0 { BirdMessage.parse(frame) } else { nil } }
    }

    static func subscribe(_ channel: String, auth: String? = nil, channelData: String? = nil) -> Frame {
        var data: JSONObject = ["channel": .string(channel)]
        if let auth { data["auth"] = .string(auth) }
        if let channelData { data["channel_data"] = .string(channelData) }
        return BirdMessage(event: "bird:subscribe", data: .object(data)).frame
    }

    /// Opens a connection and returns its socket id from the handshake.
    static func open(_ server: inout SimServer, _ id: SimConnectionID) throws -> String {
        let commands = server.handle(.opened(id, path: "/app/sim-key?protocol=7&client=js"), now: 0)
        let handshake = try #require(messages(commands, to: id).first)
        return try #require(handshake.decodedData["socket_id"]?.stringValue)
    }

    static func privateAuth(_ socketID: String, _ channel: String, secret: String = "sim-secret", data: String? = nil) -> String {
        BirdAuth.channelAuth(appKey: "sim-key", secret: secret, socketID: socketID, channel: channel, channelData: data)
    }

    @Test func handshakeCarriesSocketIDAndActivityTimeoutDoubleEncoded() throws {
        var server = Self.server { $0.activityTimeout = 7 }
        let commands = server.handle(.opened(1, path: "/app/sim-key"), now: 0)
        let handshake = try #require(Self.messages(commands, to: 1).first)
        #expect(handshake.event == "bird:connection_established")
        guard case .string(let inner) = handshake.data else { Issue.record("data is not a string: \(handshake.data)"); return }
        let data = try JSONParser.parse(inner)
        let socketID = try #require(data["socket_id"]?.stringValue)
        #expect(socketID.split(separator: ".").count == 2 && socketID.allSatisfy { $0.isNumber || $0 == "." })
        #expect(data["activity_timeout"] == .int(7))
        let other = server.handle(.opened(2, path: "/app/sim-key"), now: 0)
        #expect(Self.messages(other, to: 2).first?.decodedData["socket_id"]?.stringValue != socketID, "socket ids differ")
    }

    @Test func pusherPrefixAndOmittedSocketID() throws {
        var server = Self.server { $0.prefix = "pusher"; $0.omitSocketID = true }
        let handshake = try #require(Self.messages(server.handle(.opened(1, path: "/app/sim-key"), now: 0), to: 1).first)
        #expect(handshake.event == "pusher:connection_established")
        #expect(handshake.decodedData["socket_id"] == nil)
        #expect(handshake.decodedData["activity_timeout"] == .int(120))
    }

    @Test func unknownAppKeyAndRefuseCodeCloseWithoutHandshake() {
        var server = Self.server()
        let wrong = server.handle(.opened(1, path: "/app/other-key"), now: 0)
        #expect(Self.messages(wrong, to: 1).map(\.event) == ["bird:error"])
        #expect(wrong.contains { if case .close(1, 4001, _) = $0 { true } else { false } })
        var refusing = Self.server { $0.refuseCode = 4009 }
        let refused = refusing.handle(.opened(1, path: "/app/sim-key"), now: 0)
        #expect(Self.messages(refused, to: 1).first?.decodedData["code"] == .int(4009))
        #expect(refused.contains { if case .close(1, 4009, _) = $0 { true } else { false } })
    }

    @Test func answersPingsBothWays() throws {
        var server = Self.server()
        _ = try Self.open(&server, 1)
        #expect(server.handle(.received(1, Frame(opcode: .ping, payload: [7])), now: 1) == [.send(1, Frame(opcode: .pong, payload: [7]))])
        #expect(Self.messages(server.handle(.received(1, BirdMessage(event: "bird:ping").frame), now: 1), to: 1).map(\.event) == ["bird:pong"])
    }

    @Test func stallPongsAnswersNoPing() throws {
        var server = Self.server { $0.stallPongs = true }
        _ = try Self.open(&server, 1)
        #expect(server.handle(.received(1, Frame(opcode: .ping, payload: [7])), now: 1).isEmpty)
        #expect(server.handle(.received(1, BirdMessage(event: "bird:ping").frame), now: 1).isEmpty)
    }

    @Test func publicChannelNeedsNoAuth() throws {
        var server = Self.server()
        _ = try Self.open(&server, 1)
        let reply = Self.messages(server.handle(.received(1, Self.subscribe("news")), now: 0), to: 1)
        #expect(reply.map(\.event) == ["bird_internal:subscription_succeeded"])
        #expect(reply.first?.channel == "news")
        #expect(server.subscribers(of: "news") == [1])
    }

    @Test func privateChannelChecksTheSignatureForThisSocket() throws {
        var server = Self.server()
        let a = try Self.open(&server, 1)
        let b = try Self.open(&server, 2)
        let good = Self.messages(server.handle(.received(1, Self.subscribe("private-x", auth: Self.privateAuth(a, "private-x"))), now: 0), to: 1)
        #expect(good.map(\.event) == ["bird_internal:subscription_succeeded"])
        // Connection 2 presents connection 1's signature: refused.
        let stale = Self.messages(server.handle(.received(2, Self.subscribe("private-x", auth: Self.privateAuth(a, "private-x"))), now: 0), to: 2)
        #expect(stale.map(\.event) == ["bird:subscription_error"])
        #expect(stale.first?.decodedData["status"] == .int(403))
        let wrongSecret = Self.messages(server.handle(.received(2, Self.subscribe("private-x", auth: Self.privateAuth(b, "private-x", secret: "nope"))), now: 0), to: 2)
        #expect(wrongSecret.map(\.event) == ["bird:subscription_error"])
        let missing = Self.messages(server.handle(.received(2, Self.subscribe("private-x")), now: 0), to: 2)
        #expect(missing.map(\.event) == ["bird:subscription_error"])
        #expect(server.subscribers(of: "private-x") == [1])
    }

    @Test func presenceSignsChannelDataAndTellsMembers() throws {
        var server = Self.server()
        let a = try Self.open(&server, 1)
        let b = try Self.open(&server, 2)
        let adaData = "{\"user_id\":\"ada\",\"user_info\":{\"name\":\"Ada\"}}"
        let bobData = "{\"user_id\":\"bob\"}"
        _ = server.handle(.received(1, Self.subscribe("presence-r", auth: Self.privateAuth(a, "presence-r", data: adaData), channelData: adaData)), now: 0)
        // Signed without the channel data: refused.
        let unsigned = server.handle(.received(2, Self.subscribe("presence-r", auth: Self.privateAuth(b, "presence-r"), channelData: bobData)), now: 0)
        #expect(Self.messages(unsigned, to: 2).map(\.event) == ["bird:subscription_error"])
        let joined = server.handle(.received(2, Self.subscribe("presence-r", auth: Self.privateAuth(b, "presence-r", data: bobData), channelData: bobData)), now: 0)
        let succeeded = try #require(Self.messages(joined, to: 2).first)
        let presence = try #require(succeeded.decodedData["presence"])
        #expect(presence["ids"] == ["ada", "bob"])
        #expect(presence["count"] == .int(2))
        #expect(presence["hash"]?["ada"]?["name"] == "Ada")
        #expect(Self.messages(joined, to: 1).map(\.event) == ["bird_internal:member_added"])
        let left = server.handle(.closed(2), now: 1)
        let removed = try #require(Self.messages(left, to: 1).first)
        #expect(removed.event == "bird_internal:member_removed")
        #expect(removed.decodedData["user_id"] == "bob")
    }

    @Test func clientEventsRelayToOtherSubscribersOnly() throws {
        var server = Self.server()
        var sockets: [String] = []
        for id in 1...3 { sockets.append(try Self.open(&server, id)) }
        for id in 1...2 {
            _ = server.handle(.received(id, Self.subscribe("private-room", auth: Self.privateAuth(sockets[id - 1], "private-room"))), now: 0)
        }
        let event = BirdMessage(event: "client-typing", channel: "private-room", data: ["text": "hi"])
        let relayed = server.handle(.received(1, event.frame), now: 1)
        #expect(Self.messages(relayed, to: 2) == [event])
        #expect(Self.messages(relayed, to: 1).isEmpty, "no echo to the sender")
        #expect(Self.messages(relayed, to: 3).isEmpty, "not to connections off the channel")
        // Not subscribed, or on a public channel: refused with an error, relayed to nobody.
        let outsider = server.handle(.received(3, event.frame), now: 1)
        #expect(Self.messages(outsider, to: 3).map(\.event) == ["bird:error"])
        #expect(Self.messages(outsider, to: 2).isEmpty)
        _ = server.handle(.received(1, Self.subscribe("news")), now: 0)
        let onPublic = server.handle(.received(1, BirdMessage(event: "client-x", channel: "news").frame), now: 1)
        #expect(Self.messages(onPublic, to: 1).map(\.event) == ["bird:error"])
    }

    @Test func unsubscribeStopsEvents() throws {
        var server = Self.server { $0.eventInterval = 1_000 }
        _ = try Self.open(&server, 1)
        _ = server.handle(.received(1, Self.subscribe("news")), now: 0)
        let tick = server.handle(.timer(.tick), now: 1_000)
        #expect(Self.messages(tick, to: 1).map(\.event) == ["sim-tick"])
        #expect(tick.contains(.schedule(.tick, at: 2_000)))
        _ = server.handle(.received(1, BirdMessage(event: "bird:unsubscribe", data: ["channel": "news"]).frame), now: 1_500)
        #expect(Self.messages(server.handle(.timer(.tick), now: 2_000), to: 1).isEmpty)
    }

    @Test func signinChecksTheSignature() throws {
        var server = Self.server()
        let socket = try Self.open(&server, 1)
        let userData = "{\"id\":\"ada\"}"
        let bad = BirdMessage(event: "bird:signin", data: ["auth": "sim-key:00", "user_data": .string(userData)])
        #expect(Self.messages(server.handle(.received(1, bad.frame), now: 0), to: 1).map(\.event) == ["bird:error"])
        let auth = BirdAuth.signinAuth(appKey: "sim-key", secret: "sim-secret", socketID: socket, userData: userData)
        let good = BirdMessage(event: "bird:signin", data: ["auth": .string(auth), "user_data": .string(userData)])
        let reply = try #require(Self.messages(server.handle(.received(1, good.frame), now: 0), to: 1).first)
        #expect(reply.event == "bird:signin_success")
        #expect(reply.decodedData["user_data"] == .string(userData))
        #expect(server.sessions[1]?.signedInUser == "ada")
    }

    @Test func closeFromClientIsEchoedAndForgotten() throws {
        var server = Self.server()
        _ = try Self.open(&server, 1)
        _ = server.handle(.received(1, Self.subscribe("news")), now: 0)
        let commands = server.handle(.received(1, .close(code: 4201, reason: "pong not received")), now: 1)
        #expect(commands.contains(.close(1, code: 4201, reason: "")))
        #expect(server.subscribers(of: "news").isEmpty)
        // A close code that may not be sent is answered with 1000.
        _ = try Self.open(&server, 2)
        #expect(server.handle(.received(2, Frame(opcode: .close, payload: [0x03, 0xED])), now: 1).contains(.close(2, code: 1000, reason: "")))
    }

    @Test func closeAfterClosesEachConnectionOnSchedule() throws {
        var server = Self.server { $0.closeAfter = 5_000_000; $0.closeCode = 4100 }
        let opened = server.handle(.opened(1, path: "/app/sim-key"), now: 1_000)
        #expect(opened.contains(.schedule(.closeAfter(1), at: 5_001_000)))
        let closed = server.handle(.timer(.closeAfter(1)), now: 5_001_000)
        #expect(closed.contains { if case .close(1, 4100, _) = $0 { true } else { false } })
    }

    @Test func appKeyFromPath() {
        #expect(SimServerSession.appKey(in: "/app/k1?protocol=7&client=js") == "k1")
        #expect(SimServerSession.appKey(in: "/app/k1") == "k1")
        #expect(SimServerSession.appKey(in: "/apps/k1") == nil)
        #expect(SimServerSession.appKey(in: "/app/k1/extra") == nil)
    }
}
