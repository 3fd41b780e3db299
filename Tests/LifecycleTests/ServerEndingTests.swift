import Testing
import JSON
import Capture
import Vocabulary
@testable import Lifecycle

/// A server message that ends the session (`SessionEnding`, set by the protocol's entry)
/// decides the drop after it when the spec's client honours such messages: final leaves
/// the client failed, so a new connection is `failed.retried`; an invitation makes the
/// drop one to retry, so a missing reconnect is `reconnect.missing`. Pure: records in,
/// findings out, decoded by the built-in specs' own entries (socketio, signalr).
@Suite struct ServerEndingTests {
    static let rs = "\u{1e}"

    /// A Socket.IO connection opened at 0: engine.io's open packet, the client's namespace
    /// connect on '/' and its answer.
    static func socketIOConnected(_ wire: inout Wire) -> ConnectionID {
        let conn = wire.connect(at: 0, handshake: false)
        wire.server(conn, at: 0.01, #"0{"sid":"s1","upgrades":[],"pingInterval":25000,"pingTimeout":20000}"#)
        wire.client(conn, at: 0.02, "40")
        wire.server(conn, at: 0.03, #"40{"sid":"n1"}"#)
        return conn
    }

    /// A Socket.IO client connected on '/' at 0 (open packet, namespace answer), then the
    /// server's `41` at 1 s and the client's close 1000 right after (python-socketio's
    /// `_handle_disconnect`); with `retryAt` a new connection then.
    static func socketIO(retryAt: Double?) -> Wire {
        var wire = Wire()
        let conn = Self.socketIOConnected(&wire)
        wire.server(conn, at: 1, "41")
        wire.close(conn, at: 1.01, from: .client, code: 1000)
        if let retryAt {
            let next = wire.connect(at: retryAt, handshake: false)
            wire.server(next, at: retryAt + 0.01, #"0{"sid":"s2","upgrades":[],"pingInterval":25000,"pingTimeout":20000}"#)
        }
        return wire
    }

    /// A SignalR client connected at 0 (handshake answer), the hub's close message `record`
    /// at 1 s and its close 1000; with `retryAt` a new connection then.
    static func signalR(_ record: String, retryAt: Double?) -> Wire {
        var wire = Wire()
        let conn = wire.connect(at: 0, handshake: false)
        wire.client(conn, at: 0.01, #"{"protocol":"json","version":1}"# + rs)
        wire.server(conn, at: 0.02, "{}" + rs)
        wire.server(conn, at: 1, record + rs)
        wire.close(conn, at: 1.01, from: .server, code: 1000)
        if let retryAt {
            let next = wire.connect(at: retryAt, handshake: false)
            wire.client(next, at: retryAt + 0.01, #"{"protocol":"json","version":1}"# + rs)
        }
        return wire
    }

    static func finalState(_ outcome: Outcome) -> String? { outcome.transitions.last?.to }

    @Test func aSocketIOServerDisconnectIsFinal() throws {
        let kept = try analyze(Self.socketIO(retryAt: nil), spec: "socketio", end: 5)
        #expect(kept.rules() == [])
        #expect(Self.finalState(kept) == "failed")
        let retried = try analyze(Self.socketIO(retryAt: 2), spec: "socketio", end: 5)
        #expect(retried.rules() == ["failed.retried"])
        #expect(retried.findings.first?.message.contains("the server ended the session for good") == true)
    }

    /// python-engineio's `Client.disconnect` (the app's disconnect) sends `41` and the
    /// engine.io close packet `1`; a server that closes the WebSocket on that packet can get
    /// its close 1000 on the wire before the client's. The drop is still the client's own
    /// disconnect: no reconnect is owed, and none is reported as missing or undetermined.
    @Test func theClientsOwnClosePacketMakesTheDropItsDisconnectWhoeverClosesFirst() throws {
        var wire = Wire()
        let conn = Self.socketIOConnected(&wire)
        wire.client(conn, at: 1, "41")
        wire.client(conn, at: 1.001, "1")
        wire.close(conn, at: 1.002, from: .server, code: 1000)
        let outcome = try analyze(wire, spec: "socketio", end: 1.2)
        #expect(outcome.rules() == [])
        let open = outcome.events.filter { if case .undetermined = $0 { true } else { false } }
        #expect(open.isEmpty, "\(open)")
        #expect(Self.finalState(outcome) == "disconnected")
        // A server close packet ends it for good too (the client answers it and does not
        // reconnect: `_handle_eio_disconnect` sees `state` 'disconnecting').
        var serverEnded = Wire()
        let first = serverEnded.connect(at: 0, handshake: false)
        serverEnded.server(first, at: 0.01, #"0{"sid":"s1","upgrades":[],"pingInterval":25000,"pingTimeout":20000}"#)
        serverEnded.server(first, at: 1, "1")
        serverEnded.close(first, at: 1.01, from: .server, code: 1000)
        let next = serverEnded.connect(at: 2, handshake: false)
        serverEnded.server(next, at: 2.01, #"0{"sid":"s2","upgrades":[],"pingInterval":25000,"pingTimeout":20000}"#)
        #expect(try analyze(serverEnded, spec: "socketio", end: 5).rules() == ["failed.retried"])
    }

    @Test func aSpecWhoseClientIgnoresEndingsKeepsTheCloseCodesMeaning() throws {
        var spec = try SpecLoader.load("socketio")
        spec.honoursServerEndings = false
        let retried = try analyze(Self.socketIO(retryAt: 2), spec: spec, end: 5)
        // The client's close 1000 is then its app's disconnect, after which a connection is new.
        #expect(retried.rules() == [])
    }

    @Test func aSignalRCloseWithoutAllowReconnectIsFinal() throws {
        for record in [#"{"type":7}"#, #"{"type":7,"allowReconnect":false}"#, #"{"type":7,"error":"bye"}"#] {
            let kept = try analyze(Self.signalR(record, retryAt: nil), spec: "signalr", end: 5)
            #expect(kept.rules() == [], "\(record)")
            #expect(Self.finalState(kept) == "failed", "\(record)")
            let retried = try analyze(Self.signalR(record, retryAt: 1.05), spec: "signalr", end: 5)
            #expect(retried.rules() == ["failed.retried"], "\(record)")
        }
    }

    @Test func aSignalRCloseThatAllowsReconnectOwesOne() throws {
        // With an error too: the protocol still invites the reconnect (pysignalr, which
        // stops on any error, is then reported).
        for record in [#"{"type":7,"allowReconnect":true}"#, #"{"type":7,"error":"restart","allowReconnect":true}"#] {
            let retried = try analyze(Self.signalR(record, retryAt: 1.05), spec: "signalr", end: 5)
            #expect(retried.rules() == [], "\(record)")
            let missing = try analyze(Self.signalR(record, retryAt: nil), spec: "signalr", end: 5)
            #expect(missing.rules() == ["reconnect.missing"], "\(record)")
        }
    }
}
