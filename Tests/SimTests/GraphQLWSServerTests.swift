import JSON
import Sim
import Testing
import WebSocket

/// The graphql-ws server machine (`sim server --protocol graphql-ws`) driven by hand.
@Suite struct GraphQLWSServerTests {
    static func server(_ change: (inout SimServerSettings) -> Void = { _ in }) -> GraphQLWSSimServer {
        var settings = SimServerSettings()
        settings.protocolName = "graphql-ws"
        settings.eventInterval = nil
        change(&settings)
        return GraphQLWSSimServer(settings: settings)
    }

    static func text(_ json: String) -> SimServerEvent { .received(1, .text(json)) }

    /// The JSON messages sent to connection 1 among `commands`.
    static func sent(_ commands: [SimServerCommand]) -> [JSONValue] {
        commands.compactMap { if case .send(1, let frame) = $0, frame.opcode == .text { try? JSONParser.parse(frame.payload) } else { nil } }
    }

    static func closeCode(_ commands: [SimServerCommand]) -> UInt16? {
        commands.lazy.compactMap { if case .close(1, let code, _) = $0 { code } else { nil } }.first
    }

    /// Opens connection 1 and completes the handshake.
    static func acked(_ server: inout GraphQLWSSimServer) -> [SimServerCommand] {
        _ = server.handle(.opened(1, path: "/graphql"), now: 0)
        return server.handle(text(#"{"type":"connection_init","payload":{}}"#), now: 1)
    }

    @Test func echoesTheSubprotocolOnlyWhenOffered() {
        let server = Self.server()
        #expect(server.acceptedSubprotocol(offered: ["graphql-ws", "graphql-transport-ws"]) == "graphql-transport-ws")
        #expect(server.acceptedSubprotocol(offered: ["graphql-ws"]) == nil)
    }

    @Test func acksTheInitAndClosesASecondOne4429() {
        var server = Self.server()
        #expect(Self.sent(Self.acked(&server)).map { $0["type"]?.stringValue } == ["connection_ack"])
        #expect(Self.closeCode(server.handle(Self.text(#"{"type":"connection_init"}"#), now: 2)) == 4429)
    }

    @Test func closesWithoutInitAfterTheInitTimeout4408() throws {
        var server = Self.server { $0.initTimeout = 500 }
        let opened = server.handle(.opened(1, path: "/graphql"), now: 0)
        #expect(opened.contains(.schedule(.connection(1, tag: GraphQLWSSimServer.initTimeoutTag), at: 500)))
        #expect(Self.closeCode(server.handle(.timer(.connection(1, tag: GraphQLWSSimServer.initTimeoutTag)), now: 500)) == 4408)
        // Once acked, the timer does nothing.
        var acked = Self.server { $0.initTimeout = 500 }
        _ = Self.acked(&acked)
        #expect(acked.handle(.timer(.connection(1, tag: GraphQLWSSimServer.initTimeoutTag)), now: 500).isEmpty)
    }

    @Test func answersPingsUnlessPongsAreStalled() {
        var server = Self.server()
        _ = Self.acked(&server)
        #expect(Self.sent(server.handle(Self.text(#"{"type":"ping"}"#), now: 2)).map { $0["type"]?.stringValue } == ["pong"])
        var stalled = Self.server { $0.stallPongs = true }
        _ = Self.acked(&stalled)
        #expect(Self.sent(stalled.handle(Self.text(#"{"type":"ping"}"#), now: 2)).isEmpty)
    }

    @Test func sendsEveryActiveOperationANextEachTickUntilCompleted() throws {
        var server = Self.server { $0.eventInterval = 100 }
        #expect(server.start(now: 0) == [.schedule(.tick, at: 100)])
        _ = Self.acked(&server)
        _ = server.handle(Self.text(#"{"id":"1","type":"subscribe","payload":{"query":"subscription { tick }"}}"#), now: 2)
        _ = server.handle(Self.text(#"{"id":"2","type":"subscribe","payload":{"query":"subscription { tick }"}}"#), now: 3)
        let tick = server.handle(.timer(.tick), now: 100)
        let nexts = Self.sent(tick)
        #expect(nexts.map { $0["id"]?.stringValue } == ["1", "2"])
        #expect(nexts.allSatisfy { $0["type"]?.stringValue == "next" && $0["payload"]?["data"]?["sim-tick"]?["n"]?.intValue == 1 })
        #expect(tick.contains(.schedule(.tick, at: 200)))
        _ = server.handle(Self.text(#"{"id":"1","type":"complete"}"#), now: 150)
        #expect(Self.sent(server.handle(.timer(.tick), now: 200)).map { $0["id"]?.stringValue } == ["2"])
    }

    @Test func protocolViolationsCloseWithTheirCodes() {
        var early = Self.server()
        _ = early.handle(.opened(1, path: "/graphql"), now: 0)
        #expect(Self.closeCode(early.handle(Self.text(#"{"id":"1","type":"subscribe","payload":{}}"#), now: 1)) == 4401)

        var duplicate = Self.server()
        _ = Self.acked(&duplicate)
        _ = duplicate.handle(Self.text(#"{"id":"1","type":"subscribe","payload":{}}"#), now: 2)
        #expect(Self.closeCode(duplicate.handle(Self.text(#"{"id":"1","type":"subscribe","payload":{}}"#), now: 3)) == 4409)

        for garbage in ["not json", #"{"type":"what"}"#, #"{"type":"subscribe","payload":{}}"#] {
            var server = Self.server()
            _ = Self.acked(&server)
            #expect(Self.closeCode(server.handle(Self.text(garbage), now: 2)) == 4400, "\(garbage)")
        }
    }

    @Test func refusesAndClosesOnScheduleWhenTold() {
        var refusing = Self.server { $0.refuseCode = 4403 }
        #expect(Self.closeCode(refusing.handle(.opened(1, path: "/graphql"), now: 0)) == 4403)
        var closing = Self.server { $0.closeAfter = 700; $0.closeCode = 4500 }
        let opened = closing.handle(.opened(1, path: "/graphql"), now: 0)
        #expect(opened.contains(.schedule(.closeAfter(1), at: 700)))
        #expect(Self.closeCode(closing.handle(.timer(.closeAfter(1)), now: 700)) == 4500)
    }

    @Test func isServedBySimServerProtocolGraphQLWS() {
        #expect(SimServerProtocols.names.contains("graphql-ws"))
        var settings = SimServerSettings()
        settings.protocolName = "graphql-ws"
        #expect(SimServerProtocols.make(settings, seed: 1) is GraphQLWSSimServer)
    }
}
