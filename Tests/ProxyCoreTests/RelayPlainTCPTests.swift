import Capture
import Testing
import WebSocket
@testable import ProxyCore

/// Connections that do not start with an HTTP request are relayed as plain TCP.
@Suite struct RelayPlainTCPTests {
    let ping = Array("*1\r\n$4\r\nPING\r\n".utf8)   // Redis's RESP: starts with '*'

    @Test func bytesGoBothWaysAsTheyCome() {
        var h = Harness()
        let first = h.client(ping)
        #expect(first.contains(.connectUpstream) && first.contains(.pauseReading(.client)))
        #expect(first.notes.first?.message.contains("relaying plain TCP") == true)
        #expect(first.sent(to: .server).isEmpty)
        let more = Array("*1\r\n".utf8)
        _ = h.client(more)   // arrived while connecting: sent once the upstream is up
        let connected = h.handle(.upstreamConnected)
        #expect(connected.sent(to: .server) == ping + more)
        #expect(connected.contains(.resumeReading(.client)))
        #expect(h.server(Array("+PONG\r\n".utf8)).sent(to: .client) == Array("+PONG\r\n".utf8))
        #expect(h.client([0, 1, 2]).sent(to: .server) == [0, 1, 2])
        #expect(h.log.frameRecords.isEmpty && h.log.upgrades.isEmpty)
    }

    @Test func finsPassOneByOneAndTheEndIsCounted() {
        var h = Harness()
        _ = h.client(ping)
        _ = h.handle(.upstreamConnected)
        let clientFIN = h.handle(.ended(side: .client, kind: .fin, detail: nil))
        #expect(clientFIN.socketCommands == [.shutdown(.server)])
        _ = h.server(Array("+PONG\r\n".utf8))
        let serverFIN = h.handle(.ended(side: .server, kind: .fin, detail: nil))
        #expect(serverFIN.socketCommands == [.close(.client), .close(.server)])
        #expect(serverFIN.notes.last?.message == "plain TCP relayed 14 bytes client to server, 7 server to client")
        // Each FIN on both legs, in order: the client's, passed on to the server, the
        // server's, passed on to the client (leg, then who sent it on that leg).
        #expect(h.log.ends.map { "\($0.leg?.rawValue ?? "-") \($0.side)" }
                == ["client client", "upstream client", "upstream server", "client server"])
    }

    @Test func aResetIsPassedOn() {
        var h = Harness()
        _ = h.client([0x00, 0x00, 0x00, 0x08])   // a PostgreSQL startup length
        _ = h.handle(.upstreamConnected)
        let reset = h.handle(.ended(side: .server, kind: .rst, detail: "connection reset by peer"))
        #expect(reset.socketCommands.contains(.reset(.client)))
    }

    @Test func httpStillGoesThroughTheUpgrade() {
        var h = Harness()
        let commands = h.client(Array("GET".utf8))
        #expect(!commands.contains(.connectUpstream))
        #expect(commands.notes.isEmpty)
    }
}
