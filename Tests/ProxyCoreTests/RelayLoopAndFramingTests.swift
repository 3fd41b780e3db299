import Testing
import WebSocket
@testable import ProxyCore

/// A request carrying both Content-Length and Transfer-Encoding is framed two ways (RFC 9112
/// 6.1): an intermediary must remove Content-Length or reject it. The proxy rejects it, as
/// nginx does, and records the request and its 400.
@Suite struct ContentLengthWithTransferEncodingTests {
    @Test(arguments: [
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "transfer-encoding: gzip, chunked\r\ncontent-length: 0\r\n",
    ])
    func refusedWith400AndRecorded(framing: String) {
        var harness = Harness()
        let request = "GET / HTTP/1.1\r\nHost: a\r\n" + framing + RequestInjectionTests.upgrade + "\r\n"
        let commands = harness.client(Array(request.utf8))
        let answer = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(answer.contains("Content-Length with Transfer-Encoding"))
        #expect(!commands.contains(.connectUpstream))
        #expect(commands.upgrades.map(\.status) == [nil, 400])
        #expect(commands.notes.first?.message.contains("RFC 9112 6.1") == true)
    }

    @Test func eitherAloneStillPasses() {
        for framing in ["Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n"] {
            var harness = Harness()
            let request = "GET / HTTP/1.1\r\nHost: a\r\n" + framing + RequestInjectionTests.upgrade + "\r\n"
            #expect(harness.client(Array(request.utf8)).contains(.connectUpstream))
        }
    }
}

/// The proxy names itself in a `Via` header on every request it forwards (RFC 9110 7.6.3),
/// and a request that already carries its own name has gone round in a loop: answered 508
/// Loop Detected, recorded, and never forwarded again.
@Suite struct ViaLoopDetectionTests {
    static let config: RelayConfig = {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.viaPseudonym = "faultline-1a2b3c4d"
        return config
    }()

    @Test func forwardedRequestsCarryTheProxysVia() {
        var harness = Harness(config: Self.config)
        harness.client(Wire.request)
        let forwarded = String(decoding: harness.handle(.upstreamConnected).sent(to: .server), as: UTF8.self)
        #expect(forwarded.contains("\r\nVia: 1.1 faultline-1a2b3c4d\r\n"))
        #expect(forwarded.hasSuffix("\r\n\r\n"))
    }

    @Test func anotherIntermediarysViaIsKeptAndOursAdded() {
        var harness = Harness(config: Self.config)
        let request = Wire.requestText.replacingOccurrences(of: "User-Agent:", with: "Via: 1.1 edge, 1.0 faultline-99\r\nUser-Agent:")
        #expect(harness.client(Array(request.utf8)).contains(.connectUpstream))
        let forwarded = String(decoding: harness.handle(.upstreamConnected).sent(to: .server), as: UTF8.self)
        #expect(forwarded.contains("\r\nVia: 1.1 edge, 1.0 faultline-99\r\n"))
        #expect(forwarded.contains("\r\nVia: 1.1 faultline-1a2b3c4d\r\n"))
    }

    @Test(arguments: ["Via: 1.1 faultline-1a2b3c4d", "via: 1.0 edge,1.1 FAULTLINE-1a2b3c4d (faultline)",
                      "Via: 1.1 edge\r\nVia: HTTP/1.1 faultline-1a2b3c4d"])
    func ownViaIsALoopAnswered508(via: String) {
        var harness = Harness(config: Self.config)
        let request = Wire.requestText.replacingOccurrences(of: "User-Agent:", with: via + "\r\nUser-Agent:")
        let commands = harness.client(Array(request.utf8))
        let answer = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 508 Loop Detected\r\n"))
        #expect(!commands.contains(.connectUpstream))
        #expect(commands.upgrades.map(\.status) == [nil, 508])
        #expect(commands.notes.first?.message.contains("loop") == true)
        #expect(harness.session.isFinished)
    }

    @Test func withoutAPseudonymNothingIsAdded() {
        var harness = Harness()
        harness.client(Wire.request)
        let forwarded = String(decoding: harness.handle(.upstreamConnected).sent(to: .server), as: UTF8.self)
        #expect(!forwarded.contains("Via:"))
    }
}
