import Capture
import Testing
import WebSocket
@testable import ProxyCore

/// TCP ends after a completed close handshake reach each peer as the other peer sent them
/// (issue 17 item 2): the server's RST as an RST, its FIN as a FIN.
@Suite struct RelayEndsTests {
    /// The client closes, the server answers: the handshake is over, and nothing is closed
    /// by the proxy yet (the server ends the TCP connection first, RFC 6455 7.1.1).
    static func closeHandshake() -> Harness {
        var harness = Harness()
        harness.open()
        harness.handle(.received(from: .client, bytes: Wire.fromClient(.close(code: 1000, reason: ""))), at: 100)
        let reply = harness.handle(.received(from: .server, bytes: Wire.fromServer(.close(code: 1000, reason: ""))), at: 200)
        #expect(reply.socketCommands.isEmpty, "closed before either peer ended: \(reply.socketCommands)")
        #expect(reply.ends.isEmpty)
        return harness
    }

    @Test func aServerResetAfterTheCloseHandshakeReachesTheClientAsAReset() {
        var harness = Self.closeHandshake()
        let reset = harness.handle(.ended(side: .server, kind: .rst, detail: "ECONNRESET"), at: 300)
        #expect(reset.socketCommands == [.reset(.client), .close(.server)])
        #expect(reset.ends == [
            EndRecord(conn: 1, t: 300, side: .server, kind: .rst, detail: "ECONNRESET", leg: .upstream),
            EndRecord(conn: 1, t: 300, side: .server, kind: .rst, detail: "sent by the proxy to the client", leg: .client),
        ])
        #expect(harness.session.isFinished)
    }

    @Test func aServerFinAfterTheCloseHandshakeIsPassedOnThenTheClientsFinEndsThePair() {
        var harness = Self.closeHandshake()
        let serverFin = harness.handle(.ended(side: .server, kind: .fin, detail: nil), at: 300)
        #expect(serverFin.socketCommands == [.shutdown(.client)])
        #expect(serverFin.ends == [
            EndRecord(conn: 1, t: 300, side: .server, kind: .fin, leg: .upstream),
            EndRecord(conn: 1, t: 300, side: .server, kind: .fin, detail: "passed on by the proxy to the client", leg: .client),
        ])
        #expect(!harness.session.isFinished)
        let clientFin = harness.handle(.ended(side: .client, kind: .fin, detail: nil), at: 400)
        #expect(clientFin.socketCommands == [.close(.client), .close(.server)])
        #expect(clientFin.ends == [
            EndRecord(conn: 1, t: 400, side: .client, kind: .fin, leg: .client),
            EndRecord(conn: 1, t: 400, side: .client, kind: .fin, detail: "sent by the proxy to the server", leg: .upstream),
        ])
        #expect(harness.session.isFinished)
    }

    @Test func aClientResetAfterTheCloseHandshakeReachesTheServerAsAReset() {
        var harness = Self.closeHandshake()
        let reset = harness.handle(.ended(side: .client, kind: .rst, detail: "ECONNRESET"), at: 300)
        #expect(reset.socketCommands == [.reset(.server), .close(.client)])
        #expect(reset.ends.last == EndRecord(conn: 1, t: 300, side: .client, kind: .rst,
                                             detail: "sent by the proxy to the server", leg: .upstream))
    }

    /// Peers that end nothing after the handshake get the proxy's FIN, within a bound.
    @Test func peersThatEndNothingAreClosedAfterTwoSeconds() {
        var harness = Self.closeHandshake()
        let late = harness.fireTimer()
        #expect(harness.now == 200 + RelaySession.closeReplyTimeout)
        #expect(late.socketCommands == [.close(.client), .close(.server)])
        #expect(late.ends.map(\.kind) == [.fin, .fin])
        #expect(harness.session.isFinished)
    }

    /// A peer that already ended before the last close frame went through: the pair ends
    /// when the other peer ends too, as before.
    @Test func anEndBeforeTheLastCloseFrameStillEndsThePairOnTheOtherEnd() {
        var harness = Harness()
        harness.open()
        harness.handle(.received(from: .client, bytes: Wire.fromClient(.close(code: 1000, reason: ""))), at: 100)
        let clientFin = harness.handle(.ended(side: .client, kind: .fin, detail: nil), at: 150)
        #expect(clientFin.socketCommands == [.shutdown(.server)])
        harness.handle(.received(from: .server, bytes: Wire.fromServer(.close(code: 1000, reason: ""))), at: 200)
        let reset = harness.handle(.ended(side: .server, kind: .rst, detail: nil), at: 300)
        #expect(reset.socketCommands == [.reset(.client), .close(.server)])
        #expect(harness.session.isFinished)
    }
}
