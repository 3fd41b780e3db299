import Bird
import JSON
import Sim
import Testing
import WebSocket

/// Client and server machines together over `Loopback`: subscriptions, signatures, sign-in
/// and client events across reconnects, checked by the real server's verdicts.
@Suite struct SimChannelTests {
    static func client(_ change: (inout SimClientSettings) -> Void = { _ in }) -> SimClientSettings {
        var settings = SimClientSettings()
        settings.channels = ["news", "private-chat", "presence-lobby"]
        settings.userID = "ada"
        settings.triggerInterval = nil
        change(&settings)
        return settings
    }

    static func server(_ change: (inout SimServerSettings) -> Void = { _ in }) -> SimServerSettings {
        var settings = SimServerSettings()
        settings.eventInterval = nil
        change(&settings)
        return settings
    }

    /// Connect, let the server die and come back, and reconnect.
    static func reconnected(_ settings: SimClientSettings) -> Loopback {
        var net = Loopback(server: server(), clients: [settings])
        net.client(0, .connect)
        net.run(for: .s(1))
        net.killServer()
        net.startServer()
        net.run(for: .s(40))
        return net
    }

    /// The `auth` of each subscribe to `channel`, with the socket id it was sent under.
    static func auths(_ net: Loopback, _ channel: String) -> [String] {
        net.sent(0, event: "bird:subscribe").compactMap {
            $0.message?.decodedData["channel"]?.stringValue == channel ? $0.message?.decodedData["auth"]?.stringValue : nil
        }
    }

    @Test func subscribesEveryChannelAndTheServerAccepts() {
        var net = Loopback(server: Self.server(), clients: [Self.client()])
        net.client(0, .connect)
        #expect(net.clients[0].state == .connected)
        #expect(net.clients[0].subscribed == ["news", "private-chat", "presence-lobby"])
        #expect(net.logs(0).contains("signed in as ada"))
        #expect(!net.logs(0).contains { $0.hasPrefix("subscription_error") })
    }

    @Test func resubscribesWithFreshAuthAfterReconnect() throws {
        let net = Self.reconnected(Self.client())
        let client = net.clients[0]
        #expect(client.state == .connected)
        #expect(net.opens(0).count == 2)
        #expect(client.subscribed == ["news", "private-chat", "presence-lobby"], "the new server accepted every signature")
        for channel in ["private-chat", "presence-lobby"] {
            let auths = Self.auths(net, channel)
            try #require(auths.count == 2)
            #expect(auths[0] != auths[1], "\(channel): a fresh signature for the new socket id")
        }
        // The second subscribes went out after the second connected, on the second socket.
        let connectedAt = net.states(0).filter { $0.to == .connected }.map(\.time)
        let second = net.sent(0, event: "bird:subscribe").filter { $0.socket == 2 }
        #expect(second.count == 3)
        #expect(second.allSatisfy { $0.time >= connectedAt[1] })
    }

    @Test func signsInAgainOnEveryConnection() {
        let net = Self.reconnected(Self.client())
        #expect(Set(net.sent(0, event: "bird:signin").map(\.socket)) == [1, 2])
        #expect(net.logs(0).filter { $0 == "signed in as ada" }.count == 2)
    }

    @Test func keepsChannelsAcrossDisconnectAndConnect() {
        var net = Loopback(server: Self.server(), clients: [Self.client()])
        net.client(0, .connect)
        net.client(0, .disconnect)
        #expect(net.clients[0].state == .disconnected)
        #expect(net.clients[0].subscribed.isEmpty)
        net.run(for: .s(60))
        #expect(net.opens(0).count == 1, "disconnect() schedules nothing")
        net.client(0, .connect)
        #expect(net.clients[0].subscribed == ["news", "private-chat", "presence-lobby"])
    }

    @Test func unsubscribedChannelsStayGoneAfterReconnect() {
        var net = Loopback(server: Self.server(), clients: [Self.client()])
        net.client(0, .connect)
        net.client(0, .unsubscribe("news"))
        #expect(net.server.subscribers(of: "news").isEmpty)
        #expect(!net.clients[0].subscribed.contains("news"))
        net.killServer()
        net.startServer()
        net.run(for: .s(40))
        #expect(net.clients[0].state == .connected)
        #expect(net.clients[0].subscribed == ["private-chat", "presence-lobby"])
        #expect(!net.sent(0, event: "bird:subscribe").contains { $0.socket == 2 && $0.message?.decodedData["channel"] == "news" })
        net.client(0, .subscribe("private-extra"))
        #expect(net.clients[0].subscribed.contains("private-extra"), "a new channel is subscribed at once while connected")
    }

    @Test func clientEventsOnlyWhileSubscribed() {
        var net = Loopback(server: Self.server(), clients: [Self.client(), Self.client { $0.userID = "bob" }])
        net.client(0, .connect)
        net.client(1, .connect)
        // The app greets its rooms once their subscription succeeded: one greeting each,
        // and no "refused" line on connect (that was noise on every connect).
        #expect(!net.logs(0).contains { $0.contains("refused") }, "\(net.logs(0))")
        let hellos = net.sent(0, event: "client-hello")
        #expect(hellos.count == 2)
        net.client(0, .trigger(channel: "private-chat", event: "client-typing"))
        #expect(net.delivered(1).contains { $0.event == "client-typing" && $0.channel == "private-chat" })
        #expect(!net.delivered(0).contains { $0.event == "client-typing" }, "not echoed to the sender")
        // After a drop nothing goes out until the channel is subscribed again.
        net.killServer()
        net.client(0, .trigger(channel: "private-chat", event: "client-typing"))
        #expect(net.sent(0, event: "client-typing").count == 1)
        #expect(net.logs(0).last == "trigger client-typing on private-chat refused: not connected")
    }

    @Test func serverEventsReachSubscribers() {
        var net = Loopback(server: Self.server { $0.eventInterval = .s(2) }, clients: [Self.client()])
        net.client(0, .connect)
        net.run(for: .s(7))
        let ticks = net.delivered(0).filter { $0.event == "sim-tick" }
        #expect(ticks.count == 9, "3 ticks on each of 3 channels")
        #expect(Set(ticks.compactMap(\.channel)) == ["news", "private-chat", "presence-lobby"])
        #expect(net.clients[0].state == .connected)
    }

    @Test func stalledPongsCloseWith4201AndReconnectAtOnce() {
        var net = Loopback(server: Self.server { $0.activityTimeout = 5 }, clients: [Self.client()])
        net.client(0, .connect)
        // Swallow the server's pongs (what the proxy's stall-pongs fault does).
        net.serverToClient = { BirdMessage.parse($0)?.event != "bird:pong" && $0.opcode != .pong }
        net.run(for: .s(36))
        let close = net.closes(0).first
        #expect(close?.code == 4201)
        #expect(close?.time == .s(35), "ping at 5 s, pong timeout 30 s")
        #expect(net.opens(0).last?.time == .s(35), "reconnected at once")
        #expect(net.clients[0].state == .connected)
    }

    @Test func failsOnRefusalAndStaysFailed() {
        var net = Loopback(server: Self.server { $0.refuseCode = 4009 }, clients: [Self.client()])
        net.client(0, .connect)
        net.run(for: .s(120))
        #expect(net.clients[0].state == .failed)
        #expect(net.opens(0).count == 1)
        #expect(net.logs(0).contains { $0.hasPrefix("error 4009") })
    }

    @Test func serverRestartBacksOffUntilItIsBack() {
        var net = Loopback(server: Self.server(), clients: [Self.client()])
        net.client(0, .connect)
        net.killServer(.reset)
        net.run(for: .s(20))  // a few refused attempts
        let failedAttempts = net.opens(0).count - 1
        #expect(failedAttempts >= 2)
        #expect(net.clients[0].state == .unavailable)
        net.startServer()
        net.run(for: .s(120))
        #expect(net.clients[0].state == .connected)
        let opens = net.opens(0).map(\.time)
        let drops = [SimMicros(0)] + opens.dropFirst().map { $0 }  // each failed connect drops at once
        for (index, (drop, open)) in zip(drops.dropLast(), opens.dropFirst()).enumerated() {
            let bound = Backoff().bound(attempt: index + 1)
            #expect(open - drop <= bound, "attempt \(index + 1): \(open - drop) > \(bound)")
        }
    }
}
