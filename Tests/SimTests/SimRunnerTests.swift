import Bird
import Foundation
import Sim
import TestSupport
import Testing
import Transport
import Vocabulary
import WebSocket

/// The runners on real loopback sockets, server and clients on one loop in this process.
@Suite(.serialized) struct SimRunnerTests {
    /// Runs `loop` until `done()` holds (checked every 10 ms) or `limit` microseconds pass.
    static func run(_ loop: EventLoop, limit: Int64 = 15_000_000, until done: @escaping () -> Bool) -> Bool {
        var reached = false
        let check = loop.scheduleRepeating(every: 10_000) {
            if done() { reached = true; loop.stop() }
        }
        let deadline = loop.schedule(after: limit) { loop.stop() }
        loop.run()
        check.cancel()
        deadline.cancel()
        return reached
    }

    @Test func clientsConnectSubscribeAndReceiveEvents() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var serverSettings = SimServerSettings()
        serverSettings.eventInterval = 100_000
        let server = SimServerRunner(loop: loop, settings: serverSettings, seed: 1)
        let bound = try server.listen(HostPort(host: "127.0.0.1", port: 0))
        var clientSettings = SimClientSettings()
        clientSettings.channels = ["news", "private-chat", "presence-lobby"]
        clientSettings.triggerInterval = 100_000
        let clients = (1...3).map { number -> SimClientSettings in
            var one = clientSettings
            one.userID = "user-\(number)"
            return one
        }
        let runner = SimClientRunner(loop: loop, url: try SimURL.parse("ws://\(bound)/app/sim-key"), clients: clients, seed: 9)
        var states: [String] = []
        var events: [Int: [String]] = [:]
        var logs: [String] = []
        runner.onStateChange = { number, from, to, detail in states.append("\(number): \(from) -> \(to) (\(detail))") }
        runner.onDelivered = { number, message in events[number, default: []].append("\(message.event) \(message.channel ?? "")") }
        runner.onLog = { number, line in logs.append("\(number): \(line)") }
        runner.start()
        let enough = Self.run(loop) {
            (1...3).allSatisfy { number in
                let got = events[number] ?? []
                return got.filter { $0.hasPrefix("sim-tick") }.count >= 6 && got.contains { $0.hasPrefix("client-chat private-chat") }
            }
        }
        #expect(enough, "events: \(events), logs: \(logs)")
        for number in 1...3 {
            #expect(states.contains { $0.hasPrefix("\(number): connecting -> connected (socket ") })
            #expect(logs.contains("\(number): subscribed private-chat"))
            #expect(logs.contains("\(number): subscribed presence-lobby"))
            #expect(logs.contains("\(number): signed in as user-\(number)"))
            #expect(!logs.contains { $0.hasPrefix("\(number): subscription_error") })
        }
        #expect(runner.clients.allSatisfy { $0.state == .connected })
        #expect((server.server as? SimServer)?.subscribers(of: "private-chat").count == 3)
        // disconnect(): each client closes with 1000, the server forgets every connection.
        runner.disconnectAll()
        let gone = Self.run(loop, limit: 5_000_000) { (server.server as? SimServer)?.sessions.isEmpty == true }
        #expect(gone)
        #expect(runner.clients.allSatisfy { $0.state == .disconnected })
        runner.stop()
        server.stop()
    }

    @Test func serverCloseCodesDriveTheClient() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var serverSettings = SimServerSettings()
        serverSettings.eventInterval = nil
        serverSettings.closeAfter = 200_000
        serverSettings.closeCode = 4200
        let server = SimServerRunner(loop: loop, settings: serverSettings, seed: 1)
        let bound = try server.listen(HostPort(host: "127.0.0.1", port: 0))
        var settings = SimClientSettings()
        settings.triggerInterval = nil
        let runner = SimClientRunner(loop: loop, url: try SimURL.parse("ws://\(bound)/app/sim-key"), clients: [settings], seed: 2)
        var states: [(SimConnectionState, SimConnectionState, String)] = []
        runner.onStateChange = { _, from, to, detail in states.append((from, to, detail)) }
        runner.start()
        let reconnected = Self.run(loop) { states.filter { $0.1 == .connected }.count >= 3 }
        #expect(reconnected)
        let closes = states.filter { $0.0 == .connected }
        #expect(closes.allSatisfy { $0.1 == .connecting && $0.2.contains("closed 4200") }, "\(closes)")
        runner.stop()
        server.stop()
    }

    @Test func staleConnectionClosesWith4201AndReconnectsAtOnce() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var serverSettings = SimServerSettings()
        serverSettings.eventInterval = nil
        serverSettings.activityTimeout = 1
        serverSettings.stallPongs = true
        let server = SimServerRunner(loop: loop, settings: serverSettings, seed: 1)
        let bound = try server.listen(HostPort(host: "127.0.0.1", port: 0))
        var settings = SimClientSettings()
        settings.channels = []
        settings.triggerInterval = nil
        settings.pongTimeout = 200_000
        let runner = SimClientRunner(loop: loop, url: try SimURL.parse("ws://\(bound)/app/sim-key"), clients: [settings], seed: 2)
        var states: [(SimConnectionState, SimConnectionState, String)] = []
        runner.onStateChange = { _, from, to, detail in states.append((from, to, detail)) }
        runner.start()
        let twice = Self.run(loop) { states.filter { $0.1 == .connected }.count >= 2 }
        #expect(twice)
        let stale = try #require(states.first { $0.0 == .connected })
        #expect(stale.1 == .connecting)
        #expect(stale.2.contains("closed 4201: no pong within 0.200 s: reconnecting at once"), "\(stale.2)")
        runner.stop()
        server.stop()
    }

    @Test func refusedClientFailsAndStaysFailed() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var serverSettings = SimServerSettings()
        serverSettings.refuseCode = 4009
        let server = SimServerRunner(loop: loop, settings: serverSettings, seed: 1)
        let bound = try server.listen(HostPort(host: "127.0.0.1", port: 0))
        var settings = SimClientSettings()
        settings.backoff = Backoff(base: 10_000, cap: 50_000)
        let runner = SimClientRunner(loop: loop, url: try SimURL.parse("ws://\(bound)/app/sim-key"), clients: [settings], seed: 2)
        runner.start()
        let failed = Self.run(loop) { runner.clients[0].state == .failed }
        #expect(failed)
        // Give a retry the chance to happen (it must not): run the loop a little longer.
        _ = Self.run(loop, limit: 300_000) { false }
        #expect(runner.clients[0].state == .failed)
        #expect(runner.clients[0].attempt == 1)
        runner.stop()
        server.stop()
    }

    /// `early-subscribe` puts its subscribe on the wire right behind the upgrade request,
    /// before any response: a server that never answers still receives it.
    @Test func earlySubscribeIsPipelinedBehindTheUpgradeRequest() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var received: [UInt8] = []
        var peers: [TCPConnection] = []
        let silent = try TCPListener(loop: loop, host: "127.0.0.1", port: 0) { tcp in
            peers.append(tcp)
            tcp.onRead = { received += $0 }
        }
        var settings = SimClientSettings()
        settings.channels = ["news", "private-chat"]
        settings.bugs = [.earlySubscribe]
        let runner = SimClientRunner(loop: loop, url: try SimURL.parse("ws://\(silent.localAddress)/app/sim-key"), clients: [settings], seed: 3)
        runner.start()
        var parser = HTTPHeadParser()
        var request: HTTPRequestHead?
        var frames: [Frame] = []
        let got = Self.run(loop, limit: 5_000_000) {
            parser = HTTPHeadParser()
            parser.append(received)
            request = try? parser.parseRequest()
            guard request != nil else { return false }
            var decoder = FrameDecoder()
            decoder.append(parser.remainder)
            frames = []
            while let frame = try? decoder.next() { frames.append(frame) }
            return !frames.isEmpty
        }
        #expect(got)
        #expect(request?.isWebSocketUpgrade == true)
        #expect(request?.headers.first(named: "User-Agent")?.hasSuffix("(client 1)") == true)
        #expect(frames.count == 1, "only the public channel; private ones need the socket id")
        #expect(frames.first?.isMasked == true)
        let message = frames.first.flatMap(BirdMessage.parse)
        #expect(message?.event == "bird:subscribe" && message?.decodedData["channel"] == "news")
        #expect(runner.clients[0].state == .connecting)
        runner.stop()
        silent.close()
        for peer in peers { peer.close() }
    }
}
