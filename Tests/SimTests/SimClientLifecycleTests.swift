import Bird
import JSON
import Sim
import Testing
import WebSocket

/// The client machine driven by hand: events in with a fake clock, commands checked.
@Suite struct SimClientLifecycleTests {
    static func settings(_ change: (inout SimClientSettings) -> Void = { _ in }) -> SimClientSettings {
        var settings = SimClientSettings()
        settings.triggerInterval = nil
        change(&settings)
        return settings
    }

    static func handshake(_ socketID: String? = "11.22", activityTimeout: Int? = nil) -> Frame {
        var data = JSONObject()
        if let socketID { data["socket_id"] = .string(socketID) }
        if let activityTimeout { data["activity_timeout"] = .int(Int64(activityTimeout)) }
        return BirdMessage(event: "bird:connection_established", data: BirdMessage.encoded(.object(data))).frame
    }

    /// A client that connected once: socket 1 open, handshake done at t = 0.
    static func connected(_ settings: SimClientSettings = settings(), activityTimeout: Int? = nil) -> SimClient {
        var client = SimClient(settings: settings, seed: 1)
        _ = client.handle(.connect, now: 0)
        _ = client.handle(.socketOpened(1), now: 0)
        _ = client.handle(.received(1, handshake(activityTimeout: activityTimeout)), now: 0)
        return client
    }

    @Test func connectsThroughTheSixStatesPath() {
        var client = SimClient(settings: Self.settings(), seed: 1)
        #expect(client.state == .initialized)
        let open = client.handle(.connect, now: 0)
        #expect(open.contains(.openSocket(1)))
        #expect(open.contains(.stateChanged(from: .initialized, to: .connecting, detail: "attempt 1, connect()")))
        _ = client.handle(.socketOpened(1), now: 10)
        #expect(client.state == .connecting, "an open socket waits for the handshake")
        let shake = client.handle(.received(1, Self.handshake("1234.5678")), now: 20)
        #expect(shake.contains(.stateChanged(from: .connecting, to: .connected, detail: "socket 1234.5678")))
        #expect(client.socketID == "1234.5678")
        #expect(client.attempt == 0)
        let bye = client.handle(.disconnect, now: 30)
        #expect(bye.contains(.close(1, code: 1000, reason: "disconnect()")))
        #expect(client.state == .disconnected)
        #expect(!bye.contains { if case .schedule(.reconnect, _) = $0 { true } else { false } })
    }

    @Test func refusalBandFailsWithoutRetry() {
        for code: UInt16 in [4000, 4001, 4009, 4099] {
            var client = Self.connected()
            let commands = client.handle(.received(1, .close(code: code, reason: "terminated")), now: .s(5))
            #expect(client.state == .failed, "close \(code)")
            #expect(commands.contains(.close(1, code: code, reason: "")), "the close is answered")
            #expect(!commands.contains { if case .openSocket = $0 { true } else if case .schedule(.reconnect, _) = $0 { true } else { false } })
        }
    }

    @Test func reconnectBandRetriesAtOnce() {
        for code: UInt16 in [4200, 4201, 4299] {
            var client = Self.connected()
            let commands = client.handle(.received(1, .close(code: code, reason: "")), now: .s(5))
            #expect(client.state == .connecting, "close \(code)")
            #expect(commands.contains(.openSocket(2)), "a new socket at the same instant")
            #expect(client.attempt == 1)
        }
    }

    @Test func otherClosesAndNetworkFailuresBackOff() {
        let ends: [SimSocketEnd] = [.closeFrame(code: 4100, reason: ""), .closeFrame(code: 4199, reason: ""),
                                    .closeFrame(code: 1000, reason: ""), .closeFrame(code: 1001, reason: ""),
                                    .closeFrame(code: 4300, reason: ""), .closeFrame(code: nil, reason: ""),
                                    .fin, .reset, .failed("refused")]
        for end in ends {
            var client = Self.connected()
            let commands = client.handle(.socketClosed(1, end), now: .s(5))
            #expect(client.state == .unavailable, "\(end)")
            let decision = try! #require(client.lastBackoff)
            #expect(decision.attempt == 1 && decision.bound == .s(1))
            #expect(commands.contains(.schedule(.reconnect, at: .s(5) + decision.delay)))
            #expect(!commands.contains { if case .openSocket = $0 { true } else { false } })
            let retry = client.handle(.timer(.reconnect), now: .s(5) + decision.delay)
            #expect(retry.contains(.openSocket(2)))
            #expect(client.state == .connecting)
        }
    }

    @Test func backoffGrowsPerFailedAttemptAndResetsOnHandshake() {
        var client = Self.connected()
        var now = SimMicros.s(10)
        _ = client.handle(.socketClosed(1, .fin), now: now)
        var attempts: [Int] = [], bounds: [SimMicros] = []
        for socket in 2...7 {
            let decision = client.lastBackoff!
            attempts.append(decision.attempt)
            bounds.append(decision.bound)
            #expect(decision.delay >= 0 && decision.delay <= decision.bound)
            now += decision.delay
            _ = client.handle(.timer(.reconnect), now: now)
            _ = client.handle(.socketClosed(socket, .failed("connection refused")), now: now)
        }
        #expect(attempts == [1, 2, 3, 4, 5, 6])
        #expect(bounds == [1, 2, 4, 8, 16, 30].map { SimMicros.s(Double($0)) })
        // A handshake resets the count: the next drop is attempt 1 again.
        now += client.lastBackoff!.delay
        _ = client.handle(.timer(.reconnect), now: now)
        _ = client.handle(.socketOpened(8), now: now)
        _ = client.handle(.received(8, Self.handshake()), now: now)
        #expect(client.attempt == 0)
        _ = client.handle(.socketClosed(8, .reset), now: now + .s(1))
        #expect(client.lastBackoff?.attempt == 1)
    }

    @Test func eventsAboutAnOldSocketAreIgnored() {
        var client = Self.connected()
        _ = client.handle(.received(1, .close(code: 4200, reason: "")), now: .s(1))  // now on socket 2
        let late = client.handle(.socketClosed(1, .fin), now: .s(1.1))
        #expect(late.isEmpty)
        #expect(client.state == .connecting)
    }

    @Test func handshakeWithoutSocketIDIsAnErrorAndCloses() {
        var client = SimClient(settings: Self.settings { $0.channels = ["news"] }, seed: 1)
        _ = client.handle(.connect, now: 0)
        _ = client.handle(.socketOpened(1), now: 0)
        let commands = client.handle(.received(1, Self.handshake(nil)), now: .s(0.1))
        #expect(commands.contains(.log("error: handshake without socket_id")))
        #expect(commands.contains(.close(1, code: 1002, reason: "handshake without socket_id")))
        #expect(client.state == .unavailable)
        #expect(!commands.contains { if case .send = $0 { true } else { false } }, "nothing but the close")
    }

    @Test func noHandshakeInTimeClosesAndBacksOff() {
        var client = SimClient(settings: Self.settings { $0.handshakeTimeout = .s(10) }, seed: 1)
        let open = client.handle(.connect, now: 0)
        #expect(open.contains(.schedule(.handshake, at: .s(10))))
        _ = client.handle(.socketOpened(1), now: 0)
        let commands = client.handle(.timer(.handshake), now: .s(10))
        #expect(commands.contains(.close(1, code: 3008, reason: "no handshake")))
        #expect(client.state == .unavailable)
    }

    // MARK: - Stale check

    @Test func staleCheckPingsAfterSilenceThenClosesWith4201() {
        var client = Self.connected(activityTimeout: 5)
        #expect(client.activityTimeout == .s(5), "the handshake's activity_timeout wins over the default")
        // A frame at 3 s moves the deadline: the timer set for 5 s finds it early and re-arms.
        _ = client.handle(.received(1, .text("{\"event\":\"tick\",\"channel\":\"x\",\"data\":\"{}\"}")), now: .s(3))
        let early = client.handle(.timer(.activity), now: .s(5))
        #expect(early == [.schedule(.activity, at: .s(8))])
        let ping = client.handle(.timer(.activity), now: .s(8))
        #expect(ping.contains(.send(1, BirdMessage(event: "bird:ping").frame)))
        #expect(ping.contains(.schedule(.pong, at: .s(38))))
        let close = client.handle(.timer(.pong), now: .s(38))
        #expect(close.first == .close(1, code: 4201, reason: "pong not received"))
        #expect(close.contains(.openSocket(2)), "reconnects at once")
        #expect(client.state == .connecting)
    }

    @Test func anyFrameAnswersThePing() {
        var client = Self.connected(activityTimeout: 5)
        _ = client.handle(.timer(.activity), now: .s(5))
        let pong = client.handle(.received(1, BirdMessage(event: "bird:pong").frame), now: .s(6))
        #expect(pong.contains(.cancel(.pong)))
        #expect(pong.contains(.schedule(.activity, at: .s(11))))
        // A pong timer that fires anyway (a runner race) changes nothing.
        #expect(client.handle(.timer(.pong), now: .s(35)).isEmpty)
        #expect(client.state == .connected)
    }

    @Test func defaultActivityTimeoutWithoutHandshakeValue() {
        var client = Self.connected()
        #expect(client.activityTimeout == .s(120))
        #expect(client.handle(.timer(.activity), now: .s(119)) == [.schedule(.activity, at: .s(120))])
        let ping = client.handle(.timer(.activity), now: .s(120))
        #expect(ping.contains(.send(1, BirdMessage(event: "bird:ping").frame)))
    }

    @Test func answersServerPings() {
        var client = Self.connected()
        let frame = client.handle(.received(1, Frame(opcode: .ping, payload: [1, 2])), now: .s(1))
        #expect(frame == [.send(1, Frame(opcode: .pong, payload: [1, 2]))])
        let event = client.handle(.received(1, BirdMessage(event: "bird:ping").frame), now: .s(2))
        #expect(event == [.send(1, BirdMessage(event: "bird:pong").frame)])
    }

    @Test func pusherPrefix() {
        var client = SimClient(settings: Self.settings { $0.prefix = "pusher" }, seed: 1)
        _ = client.handle(.connect, now: 0)
        _ = client.handle(.received(1, BirdMessage(event: "bird:connection_established",
                                                  data: BirdMessage.encoded(["socket_id": "1.1"])).frame), now: 0)
        #expect(client.state == .connecting, "a bird: handshake means nothing to a pusher client")
        _ = client.handle(.received(1, BirdMessage(event: "pusher:connection_established",
                                                  data: BirdMessage.encoded(["socket_id": "1.1"])).frame), now: 0)
        #expect(client.state == .connected)
    }
}

extension SimClientLifecycleTests {
    @Test func aTimerThatFiresEarlyWaitsTheRest() {
        var client = Self.connected(activityTimeout: 5)
        _ = client.handle(.timer(.activity), now: .s(5))  // ping; pong due at 35 s
        let early = client.handle(.timer(.pong), now: .s(35) - 3_000)
        #expect(early == [.schedule(.pong, at: .s(35))], "no close before the pong timeout passed")
        #expect(client.state == .connected)
        let due = client.handle(.timer(.pong), now: .s(35))
        #expect(due.first == .close(1, code: 4201, reason: "pong not received"))
    }
}
