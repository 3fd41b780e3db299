import GraphQLWS
import ProtocolTable
import WebSocket
import JSON
import Protocols
import Testing

@Suite struct GraphQLWSProtocolTests {
    func decode(_ text: String) -> RealtimeEvent? {
        var entry = GraphQLWSProtocol()
        return entry.decode(Array(text.utf8))
    }

    @Test func everyMessageTypeMapsOntoItsKind() {
        let cases: [(String, RealtimeEventKind)] = [
            (#"{"type":"connection_init","payload":{"token":"t"}}"#, .other),
            (#"{"type":"connection_ack"}"#, .connectionEstablished),
            (#"{"type":"ping"}"#, .ping),
            (#"{"type":"pong","payload":{"a":1}}"#, .pong),
            (#"{"id":"1","type":"subscribe","payload":{"query":"subscription { tick }"}}"#, .subscribe),
            (#"{"id":"1","type":"next","payload":{"data":{"tick":1}}}"#, .subscriptionSucceeded),
            (#"{"id":"1","type":"error","payload":[{"message":"boom"}]}"#, .subscriptionError),
            (#"{"id":"1","type":"complete"}"#, .unsubscribe),
            (#"{"type":"something_else"}"#, .other),
        ]
        for (text, kind) in cases {
            #expect(decode(text)?.kind == kind, "\(text)")
        }
    }

    @Test func theOperationIDIsTheChannelAndThePayloadTheData() throws {
        let event = try #require(decode(#"{"id":"op-7","type":"subscribe","payload":{"query":"subscription { tick }"}}"#))
        #expect(event.name == "subscribe")
        #expect(event.channel == "op-7")
        #expect(event.targetChannel == "op-7")
        #expect(event.data?["query"]?.stringValue == "subscription { tick }")
        // A numeric id (some servers send one) is its text; an escaped key takes the tree path.
        #expect(decode(#"{"id":3,"type":"next","payload":{"data":null}}"#)?.channel == "3")
        let escaped = try #require(decode(#"{"\u0074ype":"complete","id":"a\"b"}"#))
        #expect(escaped.kind == .unsubscribe)
        #expect(escaped.channel == "a\"b")
    }

    @Test func messagesWithoutAStringTypeAreNoEvents() {
        for text in ["", "[]", "42", #"{"type":1}"#, #"{"id":"1"}"#, #"{"type":"ping""#, "not json"] {
            #expect(decode(text) == nil, "\(text)")
        }
    }

    @Test func adoptingAnEventReclassifiesItByItsType() {
        var entry = GraphQLWSProtocol()
        let foreign = RealtimeEvent(name: "connection_ack", channel: nil, data: nil, rawData: nil, kind: .other)
        #expect(entry.adopt(foreign)?.kind == .connectionEstablished)
    }

    @Test func detectionClaimsTheSubprotocolAndTheInitMessageOnly() {
        #expect(GraphQLWSProtocol.claim(upgrade: UpgradeEvidence(target: "/graphql", subprotocols: ["graphql-transport-ws"])) != nil)
        #expect(GraphQLWSProtocol.claim(upgrade: UpgradeEvidence(target: "/graphql", subprotocols: ["graphql-ws"])) == nil)
        #expect(GraphQLWSProtocol.claim(upgrade: UpgradeEvidence(target: "/app/key?protocol=7")) == nil)
        #expect(GraphQLWSProtocol.claim(message: Array(#"{"type":"connection_init","payload":{}}"#.utf8)) != nil)
        #expect(GraphQLWSProtocol.claim(message: Array(#"{"type":"ping"}"#.utf8)) == nil)
        #expect(GraphQLWSProtocol.claim(message: Array(#"{"event":"bird:connection_established"}"#.utf8)) == nil)
    }
}

@Suite struct GraphQLWSDetectionTests {
    @Test func theTableChoosesTheEntryByItsSubprotocolOrItsInitMessage() {
        let table = ProtocolTable.standard
        var byUpgrade = table.detector()
        let headers = [HeaderField("Sec-WebSocket-Protocol", "graphql-transport-ws")]
        #expect(byUpgrade.offer(upgrade: UpgradeEvidence(target: "/graphql", headers: headers))?.key == "graphql-ws")
        var byMessage = table.detector()
        #expect(byMessage.offer(upgrade: UpgradeEvidence(target: "/graphql")) == nil)
        #expect(byMessage.offer(message: Array(#"{"type":"connection_init"}"#.utf8))?.key == "graphql-ws")
        #expect(table.registration(named: "graphql-ws")?.defaultSpec == "graphql-ws")
        #expect(type(of: table.entry(for: "graphql-transport-ws")).key == "graphql-ws")
    }
}
