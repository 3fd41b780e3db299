import Testing
import Protocols
@testable import Lifecycle

/// `connectedOn: ack`: the server's handshake event connects without a socket id (graphql-ws's
/// `connection_ack`), where `handshake` waits for one and `upgrade` does not wait at all.
@Suite struct ConnectedOnAckTests {
    static func connected(_ connectedOn: LifecycleSpec.ConnectedOn, ack: Bool) throws -> [String] {
        var spec = try SpecLoader.load("graphql-ws")
        spec.connectedOn = connectedOn
        var driver = Driver(spec: spec)
        driver.connect(1, at: 0)
        if ack { driver.frame(1, at: 0.1, from: .server, .connectionEstablished) }
        return driver.finish(at: 1).transitions.filter { $0.to == spec.states.connected }.map(\.cause)
    }

    @Test func theHandshakeEventConnectsWithoutASocketID() throws {
        #expect(try Self.connected(.ack, ack: true) == ["handshake connection_established"])
        #expect(try Self.connected(.ack, ack: false) == [])
        // The Pusher reading: a handshake without socket_id is no connection.
        #expect(try Self.connected(.handshake, ack: true) == [])
        #expect(try Self.connected(.upgrade, ack: false) == ["upgrade 101"])
    }

    @Test func theBuiltInGraphQLWSSpecConnectsOnTheAck() throws {
        #expect(try SpecLoader.load("graphql-ws").connectedOn == .ack)
        #expect(try SpecLoader.load("bird").connectedOn == .handshake)
    }
}
