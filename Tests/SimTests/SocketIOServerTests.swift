import Sim
import Testing
import WebSocket

/// The Socket.IO simulator server driven by hand: the open packet, the ping loop and its
/// pong deadline, namespace connects, acks, the periodic event, and the settings it honours.
@Suite struct SocketIOServerTests {
    static func server(_ change: (inout SimServerSettings) -> Void = { _ in }) -> any SimProtocolServer {
        var settings = SimServerSettings()
        settings.protocolName = "socketio"
        settings.eventInterval = nil
        settings.pingInterval = 300_000
        settings.pingTimeout = 200_000
        change(&settings)
        return SimServerProtocols.make(settings, seed: 7)!
    }

    /// The text messages sent to `id` among `commands`.
    static func texts(_ commands: [SimServerCommand], to id: SimConnectionID) -> [String] {
        commands.compactMap {
            if case .send(id, let frame) = $0, frame.opcode == .text { String(decoding: frame.payload, as: UTF8.self) } else { nil }
        }
    }

    static func schedules(_ commands: [SimServerCommand]) -> [SimServerTimer: SimMicros] {
        var out: [SimServerTimer: SimMicros] = [:]
        for case .schedule(let timer, let at) in commands { out[timer] = at }
        return out
    }

    @Test func theOpenPacketAnnouncesTheSidAndPingScheduleThenThePingLoopRuns() throws {
        var server = Self.server()
        let opened = server.handle(.opened(1, path: "/socket.io/?EIO=4&transport=websocket"), now: 1_000)
        let open = try #require(Self.texts(opened, to: 1).first)
        #expect(open.hasPrefix(#"0{"sid":""#))
        #expect(open.hasSuffix(#""upgrades":[],"pingInterval":300,"pingTimeout":200,"maxPayload":1000000}"#))
        #expect(Self.schedules(opened)[.connection(1, tag: 0)] == 301_000)
        // The ping: "2", the next ping, and the pong deadline.
        let ping = server.handle(.timer(.connection(1, tag: 0)), now: 301_000)
        #expect(Self.texts(ping, to: 1) == ["2"])
        #expect(Self.schedules(ping) == [.connection(1, tag: 0): 601_000, .connection(1, tag: 1): 501_000])
        // A pong in time: the deadline passes quietly.
        _ = server.handle(.received(1, .text("3")), now: 320_000)
        #expect(server.handle(.timer(.connection(1, tag: 1)), now: 501_000).isEmpty)
        // No pong to the next ping: the server closes the connection.
        _ = server.handle(.timer(.connection(1, tag: 0)), now: 601_000)
        let late = server.handle(.timer(.connection(1, tag: 1)), now: 801_000)
        #expect(late.contains { if case .close(1, code: 1000, _) = $0 { true } else { false } })
    }

    @Test func namespaceConnectsAreAnsweredAndAcksReturned() throws {
        var server = Self.server()
        _ = server.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0)
        let root = Self.texts(server.handle(.received(1, .text("40")), now: 10), to: 1)
        #expect(root.count == 1 && root[0].hasPrefix(#"40{"sid":""#))
        let chat = Self.texts(server.handle(.received(1, .text(#"40/chat,{"token":"x"}"#)), now: 20), to: 1)
        #expect(chat.count == 1 && chat[0].hasPrefix(#"40/chat,{"sid":""#))
        #expect(Self.texts(server.handle(.received(1, .text(#"42/chat,5["join","room"]"#)), now: 30), to: 1) == ["43/chat,5[]"])
        #expect(Self.texts(server.handle(.received(1, .text(#"42["no ack"]"#)), now: 40), to: 1) == [])
        // Not engine.io: closed with 1003.
        let junk = server.handle(.received(1, .text("hello")), now: 50)
        #expect(junk.contains { if case .close(1, code: 1003, _) = $0 { true } else { false } })
    }

    @Test func thePeriodicEventGoesToEveryConnectedNamespace() throws {
        var server = Self.server { $0.eventInterval = 1_000_000; $0.eventName = "tick" }
        #expect(Self.schedules(server.start(now: 0))[.tick] == 1_000_000)
        _ = server.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0)
        _ = server.handle(.received(1, .text("40")), now: 10)
        _ = server.handle(.received(1, .text("40/chat,")), now: 10)
        let tick = Self.texts(server.handle(.timer(.tick), now: 1_000_000), to: 1)
        #expect(tick == [#"42["tick",{"n":1,"t":1000000}]"#, #"42/chat,["tick",{"n":1,"t":1000000}]"#])
        _ = server.handle(.received(1, .text("41/chat,")), now: 1_100_000)
        #expect(Self.texts(server.handle(.timer(.tick), now: 2_000_000), to: 1) == [#"42["tick",{"n":2,"t":2000000}]"#])
    }

    @Test func theSettingsActAsTheyDoForBird() throws {
        var refusing = Self.server { $0.refuseCode = 4403 }
        let refused = refusing.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0)
        #expect(Self.texts(refused, to: 1).isEmpty)
        #expect(refused.contains { if case .close(1, code: 4403, _) = $0 { true } else { false } })

        var closing = Self.server { $0.closeAfter = 2_000_000; $0.closeCode = 4200 }
        let opened = closing.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0)
        #expect(Self.schedules(opened)[.closeAfter(1)] == 2_000_000)
        #expect(closing.handle(.timer(.closeAfter(1)), now: 2_000_000).contains {
            if case .close(1, code: 4200, _) = $0 { true } else { false }
        })

        var silent = Self.server { $0.stallPongs = true }
        _ = silent.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0)
        let stalled = silent.handle(.timer(.connection(1, tag: 0)), now: 300_000)
        #expect(Self.texts(stalled, to: 1).isEmpty)
        #expect(Self.schedules(stalled)[.connection(1, tag: 0)] == 600_000)

        var broken = Self.server { $0.omitSocketID = true }
        let open = try #require(Self.texts(broken.handle(.opened(1, path: "/socket.io/?EIO=4"), now: 0), to: 1).first)
        #expect(open.hasPrefix(#"0{"upgrades":[]"#))
    }
}
