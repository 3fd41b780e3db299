import Foundation
import Capture
import Testing
import WebSocket
@testable import ProxyCore

@Suite struct RelayUpgradeTests {
    @Test func recordsTheOpenAtStartAndArmsTheHandshakeDeadline() {
        let harness = Harness()
        #expect(harness.log == [.record(.open(OpenRecord(conn: 1, t: 0, client: "127.0.0.1:50000",
                                                          server: "127.0.0.1:8080", upstream: "upstream.test:9000"))),
                                .schedule(id: 1, at: RelayConfig.defaultHandshakeTimeout)])
    }

    @Test func forwardsTheRequestWithHostRewrittenAndRelaysTheResponseAsIs() throws {
        var harness = Harness(config: RelayConfig(upstreamHost: "upstream.test:9000", upstreamPathPrefix: "/ws"))
        let afterRequest = harness.client(Wire.request)
        #expect(afterRequest.socketCommands == [.connectUpstream])
        #expect(afterRequest.contains(.pauseReading(.client)))
        #expect(afterRequest.sent(to: .server).isEmpty)   // not before the connection is up
        let request = try #require(afterRequest.upgrades.first)
        #expect(request.from == .client && request.method == "GET" && request.target == "/app/key?protocol=7")
        #expect(request.header("Host") == "127.0.0.1:8080")

        let forwarded = harness.handle(.upstreamConnected, at: 10).sent(to: .server)
        let expected = Wire.requestText
            .replacingOccurrences(of: "GET /app/key", with: "GET /ws/app/key")
            .replacingOccurrences(of: "Host: 127.0.0.1:8080", with: "Host: upstream.test:9000")
        #expect(String(decoding: forwarded, as: UTF8.self) == expected)

        let response = Wire.response101(extra: "Sec-WebSocket-Protocol: chat\r\n")
        let relayed = harness.server(response)
        #expect(relayed.sent(to: .client) == response)
        #expect(relayed.contains(.resumeReading(.client)))
        let record = try #require(relayed.upgrades.first)
        #expect(record.from == .server && record.status == 101 && record.header("Sec-WebSocket-Protocol") == "chat")
    }

    @Test func headAndFirstFramesInOneReadAreNotLost() throws {
        var harness = Harness()
        let hello = Wire.fromClient(Wire.event("bird:subscribe"))
        harness.client(Wire.request + hello)
        harness.handle(.upstreamConnected)
        let handshake = Wire.fromServer(Wire.event("bird:connection_established", data: #""{}""#))
        let commands = harness.server(Wire.response101() + handshake)
        #expect(commands.sent(to: .client) == Wire.response101() + handshake)
        let upstream = try Wire.frames(commands.sent(to: .server))
        #expect(upstream.map(\.payload) == [Wire.event("bird:subscribe").payload])
        #expect(commands.frameRecords.map(\.from) == [.server, .client])
    }

    @Test func requestSplitByteByByte() throws {
        var harness = Harness()
        for byte in Wire.request.dropLast() { #expect(harness.client([byte]).socketCommands.isEmpty) }
        #expect(harness.client([Wire.request.last!]).socketCommands == [.connectUpstream])
    }

    @Test func refusedUpgradeIsRelayedWithItsBodyThenThePairEnds() {
        var harness = Harness()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        let head = Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 10\r\nX-Why: quota\r\n\r\n".utf8)
        let first = harness.server(head + Array("over ".utf8))
        #expect(first.sent(to: .client) == head + Array("over ".utf8))
        #expect(first.upgrades.first?.status == 403)
        #expect(first.socketCommands.isEmpty)
        let rest = harness.server(Array("quota".utf8))
        #expect(rest.sent(to: .client) == Array("quota".utf8))
        #expect(rest.socketCommands == [.close(.client), .close(.server)])
        #expect(harness.session.isFinished)
    }

    @Test func refusalWithoutLengthIsRelayedUntilTheServerCloses() {
        var harness = Harness()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        let response = Array("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\nbusy".utf8)
        #expect(harness.server(response).sent(to: .client) == response)
        let end = harness.handle(.ended(side: .server, kind: .fin, detail: nil))
        #expect(end.socketCommands == [.close(.client), .close(.server)])
        // The server's FIN, the proxy's FIN to the client and to the server, each on its leg.
        #expect(end.ends.map { "\($0.leg?.rawValue ?? "-") \($0.side)" } == ["upstream server", "client server", "upstream client"])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 426, "without Upgrade: websocket"),
        ("POST /app HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405, "POST /app"),
        ("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", 400,
         "Sec-WebSocket-Key"),
    ] as [(String, Int, String)])
    func nonWebSocketRequestsGetAClear4xx(request: String, status: Int, mentions: String) {
        var harness = Harness()
        let commands = harness.client(Array(request.utf8))
        let answer = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "))
        #expect(answer.contains("Content-Type: text/plain"))
        #expect(answer.contains(mentions))
        #expect(answer.contains("this is a WebSocket proxy"))
        #expect(commands.socketCommands == [.close(.client)])
        #expect(commands.notes.first?.message.contains("answered \(status)") == true)
        #expect(harness.session.isFinished)
    }

    @Test func garbageRequestGets400() {
        // Starts like a method token, so it is taken for HTTP (other first bytes mean plain
        // TCP: RelayPlainTCPTests).
        var harness = Harness()
        let commands = harness.client(Array("GARBAGE\u{1}\u{2}\r\n\r\n".utf8))
        #expect(String(decoding: commands.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 400 "))
        #expect(commands.socketCommands == [.close(.client)])
        #expect(commands.notes.count == 1)
    }

    @Test func upstreamFailureAnswers502WithTheReason() {
        var harness = Harness()
        harness.client(Wire.request)
        let commands = harness.handle(.upstreamFailed("connection refused"), at: 7)
        let answer = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        #expect(answer.contains("connection refused"))
        #expect(commands.ends == [EndRecord(conn: 1, t: 7, side: .server, kind: .error, detail: "connection refused", leg: .upstream),
                                  EndRecord(conn: 1, t: 7, side: .server, kind: .fin,
                                            detail: "sent by the proxy to the client", leg: .client)])
        #expect(commands.notes.first?.level == .error)
        #expect(commands.socketCommands == [.close(.client)])
        #expect(harness.session.isFinished)
    }

    @Test func upstreamClosingBeforeAnsweringGets502() {
        var harness = Harness()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        let commands = harness.handle(.ended(side: .server, kind: .fin, detail: nil))
        #expect(String(decoding: commands.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 502 "))
        #expect(commands.socketCommands == [.close(.client), .close(.server)])
    }
}

/// Requests the proxy must refuse rather than forward (RFC 9110 5.5, RFC 9112 3.2).
@Suite struct RequestInjectionTests {
    static let upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Wire.key)\r\nSec-WebSocket-Version: 13\r\n"

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Note: one\rtwo\r\n" + upgrade + "\r\n", "bare CR"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Note: one\u{0}two\r\n" + upgrade + "\r\n", "NUL"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n" + upgrade + "\r\n", "more than one Host"),
        ("GET /a\rb HTTP/1.1\r\nHost: a\r\n" + upgrade + "\r\n", "request target"),
    ] as [(String, String)])
    func refusedWith400AndNeverForwarded(request: String, mentions: String) {
        var harness = Harness()
        let commands = harness.client(Array(request.utf8))
        let answer = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(answer.contains(mentions))
        #expect(!commands.contains(.connectUpstream))
        #expect(commands.sent(to: .server).isEmpty)
        #expect(commands.socketCommands == [.close(.client)])
        #expect(commands.notes.first?.message.contains(mentions) == true)
        // Recorded: the request as it came, and the proxy's 400 as the answer.
        #expect(commands.upgrades.map(\.status) == [nil, 400])
        #expect(harness.session.isFinished)
    }

    @Test func tabsAndUTF8InValuesStillPass() {
        var harness = Harness()
        let request = "GET / HTTP/1.1\r\nHost: a\r\nX-Note: caf\u{E9}\tok\r\n" + Self.upgrade + "\r\n"
        let commands = harness.client(Array(request.utf8))
        #expect(commands.contains(.connectUpstream))
    }
}
