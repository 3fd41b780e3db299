import Testing
import Vocabulary
import WebSocket
@testable import Sim

/// The SignalR hub machine of `faultline sim server --protocol signalr`, without sockets.
@Suite struct SignalRServerTests {
    private static let rs = "\u{1e}"

    private func texts(_ commands: [SimServerCommand], to id: SimConnectionID) -> [String] {
        commands.compactMap {
            guard case .send(id, let frame) = $0 else { return nil }
            return String(decoding: frame.payload, as: UTF8.self)
        }
    }

    private func handshaken(_ settings: SimServerSettings = SimServerSettings()) -> (SignalRSimServer, [SimServerCommand]) {
        var server = SignalRSimServer(settings: settings, seed: 1)
        _ = server.handle(.opened(1, path: "/hub"), now: 0)
        let commands = server.handle(.received(1, .text("{\"protocol\":\"json\",\"version\":1}" + Self.rs)), now: 10)
        return (server, commands)
    }

    @Test func theHandshakeIsAnsweredAndKeepAlivePingsFollow() {
        var (server, commands) = handshaken()
        #expect(texts(commands, to: 1) == ["{}" + Self.rs])
        let keepAlive = SimServerTimer.connection(1, tag: SignalRSimServer.keepAliveTag)
        #expect(commands.contains(.schedule(keepAlive, at: 10 + 15 * SimDuration.second)))
        let ping = server.handle(.timer(keepAlive), now: 15 * SimDuration.second)
        #expect(texts(ping, to: 1) == ["{\"type\":6}" + Self.rs])
        #expect(ping.contains(.schedule(keepAlive, at: 30 * SimDuration.second)))
    }

    @Test func stallPongsSendsNoKeepAlive() {
        var settings = SimServerSettings()
        settings.stallPongs = true
        let (_, commands) = handshaken(settings)
        #expect(!commands.contains { if case .schedule(.connection, _) = $0 { true } else { false } })
    }

    @Test func anotherHubProtocolOrARefusalIsAnErrorAndAClose() {
        var server = SignalRSimServer(settings: SimServerSettings(), seed: 1)
        _ = server.handle(.opened(1, path: "/hub"), now: 0)
        let xml = server.handle(.received(1, .text("{\"protocol\":\"xml\",\"version\":1}" + Self.rs)), now: 0)
        #expect(texts(xml, to: 1) == ["{\"error\":\"Requested protocol 'xml' is not available.\"}" + Self.rs])
        #expect(xml.contains(.close(1, code: 1000, reason: "")))
        var settings = SimServerSettings()
        settings.refuseCode = 4003
        let (refusing, refused) = handshaken(settings)
        #expect(texts(refused, to: 1).first?.hasPrefix("{\"error\":") == true)
        #expect(refused.contains(.close(1, code: 4003, reason: "")))
        #expect(refusing.connected.isEmpty)
    }

    @Test func invocationsWithAnIdAreCompleted() {
        var (server, _) = handshaken()
        let echo = server.handle(.received(1, .text("{\"type\":1,\"invocationId\":\"4\",\"target\":\"Echo\",\"arguments\":[\"hi\"]}" + Self.rs)), now: 20)
        #expect(texts(echo, to: 1) == ["{\"type\":3,\"invocationId\":\"4\",\"result\":\"hi\"}" + Self.rs])
        let fireAndForget = server.handle(.received(1, .text("{\"type\":1,\"target\":\"Send\",\"arguments\":[]}" + Self.rs)), now: 20)
        #expect(texts(fireAndForget, to: 1).isEmpty)
        #expect(texts(server.handle(.received(1, .text("{\"type\":6}" + Self.rs)), now: 20), to: 1).isEmpty)
    }

    @Test func thePeriodicInvocationReachesConnectedClientsOnly() {
        var (server, _) = handshaken()
        _ = server.handle(.opened(2, path: "/hub"), now: 0)  // no handshake yet
        let tick = server.handle(.timer(.tick), now: 5 * SimDuration.second)
        #expect(texts(tick, to: 1) == ["{\"type\":1,\"target\":\"sim-tick\",\"arguments\":[1]}" + Self.rs])
        #expect(texts(tick, to: 2).isEmpty)
        #expect(tick.contains(.schedule(.tick, at: 10 * SimDuration.second)))
    }

    @Test func closeAfterSendsACloseMessageThatAllowsReconnect() {
        var settings = SimServerSettings()
        settings.closeAfter = SimDuration.second
        settings.closeCode = 1001
        var server = SignalRSimServer(settings: settings, seed: 1)
        let opened = server.handle(.opened(1, path: "/hub"), now: 0)
        #expect(opened.contains(.schedule(.closeAfter(1), at: SimDuration.second)))
        let closing = server.handle(.timer(.closeAfter(1)), now: SimDuration.second)
        #expect(texts(closing, to: 1) == ["{\"type\":7,\"allowReconnect\":true}" + Self.rs])
        #expect(closing.contains(.close(1, code: 1001, reason: "")))
        #expect(server.handle(.timer(.closeAfter(1)), now: SimDuration.second).isEmpty)
        settings.closeFinal = true
        var final = SignalRSimServer(settings: settings, seed: 1)
        _ = final.handle(.opened(1, path: "/hub"), now: 0)
        let finalClose = final.handle(.timer(.closeAfter(1)), now: SimDuration.second)
        #expect(texts(finalClose, to: 1) == ["{\"type\":7,\"error\":\"closed by the simulator (--close-after)\"}" + Self.rs])
    }

    @Test func aClientCloseMessageEndsTheConnection() {
        var (server, _) = handshaken()
        let closed = server.handle(.received(1, .text("{\"type\":7}" + Self.rs)), now: 30)
        #expect(closed.contains(.close(1, code: 1000, reason: "")))
        #expect(server.connected.isEmpty)
    }
}
