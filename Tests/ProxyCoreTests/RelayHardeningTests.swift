import Capture
import Faults
import Vocabulary
import WebSocket
@testable import ProxyCore

import Testing

/// Hostile clients and servers against the sans-IO relay (issue 15: handshake timeout,
/// eviction, latency-queue backpressure).
@Suite struct RelayHardeningTests {
    static func scheduled(_ commands: [RelayCommand]) -> [Micros] {
        commands.compactMap { if case .schedule(_, let at) = $0 { at } else { nil } }
    }

    @Test func aSlowlorisClientIsClosedAtTheHandshakeDeadlineWith408() {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.handshakeTimeout = 3_000_000
        var h = Harness(config: config)
        #expect(Self.scheduled(h.log) == [3_000_000], "the deadline is armed at accept")
        // One byte a second: never complete.
        for (i, byte) in Wire.request.prefix(2).enumerated() {
            let commands = h.handle(.received(from: .client, bytes: [byte]), at: Micros(i + 1) * 1_000_000)
            #expect(commands.socketCommands.isEmpty)
        }
        let end = h.fireTimer()
        #expect(h.now == 3_000_000)
        #expect(String(decoding: end.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(end.socketCommands == [.close(.client)])
        // Recorded as the client saw it: its server (the proxy) ended the connection.
        #expect(end.ends.count == 1)
        #expect(end.ends.first?.side == .server && end.ends.first?.leg == .client && end.ends.first?.kind == .fin)
        #expect(end.ends.first?.detail?.contains("handshake timeout") == true)
        #expect(end.ends.first?.detail?.contains("2 bytes received") == true)
        #expect(end.notes.first?.message.contains("handshake timeout") == true)
        #expect(h.session.isFinished)
    }

    @Test func anIdleClientThatSendsNothingIsClosedToo() {
        var h = Harness()
        let end = h.fireTimer()
        #expect(h.now == RelayConfig.defaultHandshakeTimeout)
        #expect(end.socketCommands == [.close(.client)])
        #expect(end.ends.first?.detail?.contains("0 bytes received") == true)
    }

    @Test func anUpstreamThatNeverAnswersGets504AtTheDeadline() {
        var h = Harness()
        h.client(Wire.request)
        h.handle(.upstreamConnected, at: 10)
        let end = h.fireTimer()
        #expect(String(decoding: end.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"))
        // The proxy ended the upstream leg (as its client) with the reason, then the client's.
        #expect(end.ends.first?.leg == .upstream && end.ends.first?.side == .client)
        #expect(end.ends.first?.detail?.contains("handshake timeout") == true)
        #expect(end.upgrades.map(\.status) == [504])
        #expect(Set(end.socketCommands) == [.close(.client), .close(.server)])
    }

    @Test func theDeadlineDoesNothingOnceTheWebSocketIsOpen() {
        var h = Harness()
        h.open()
        #expect(!h.session.isHandshaking)
        let late = h.fireTimer()
        #expect(late.socketCommands.isEmpty)
        #expect(late.ends.isEmpty)
        let echoed = h.handle(.received(from: .server, bytes: Wire.fromServer(.text("still here"))))
        #expect(echoed.sent(to: .client) == Wire.fromServer(.text("still here")))
    }

    @Test func evictionClosesAPendingPairOnlyBeforeItsHandshakeIsDone() {
        var pending = Harness()
        pending.client(Array(Wire.request.prefix(10)))
        let evicted = pending.session.evict(reason: "evicted to admit a new client", now: 5)
        #expect(String(decoding: evicted.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 503 "))
        #expect(evicted.socketCommands == [.close(.client)])
        #expect(evicted.ends.first?.detail == "evicted to admit a new client")
        var open = Harness()
        open.open()
        #expect(open.session.evict(reason: "x", now: 5).isEmpty)
    }

    @Test func aFloodingServerBehindALatencyFaultIsPausedAndResumed() {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.maxDelayedBytes = 10_000
        var h = Harness(config: config, faults: FaultEngine(rules: [try! FaultRule.parse("latency:10s,dir=s2c")], seed: 1))
        h.open()
        let chunk = Wire.fromServer(Frame(opcode: .binary, payload: [UInt8](repeating: 7, count: 3_000)))
        var pauses = 0
        for i in 0..<10 {
            let commands = h.handle(.received(from: .server, bytes: chunk), at: 1_000 + Micros(i))
            pauses += commands.filter { $0 == .pauseReading(.server) }.count
            #expect(commands.sent(to: .client).isEmpty)
        }
        #expect(pauses == 1, "paused once the queue passed the bound")
        #expect(h.log.notes.contains { $0.message.contains("not reading the server") })
        #expect(h.session.server.delayedBytes > 10_000)
        // Release: the queue drains and reading resumes once at half.
        var resumed = false
        var released = 0
        while h.session.server.delayedBytes > 0 {
            let commands = h.fireTimer()
            released += commands.frameRecords.count
            if commands.contains(.resumeReading(.server)) { resumed = true }
            if commands.isEmpty { break }
        }
        #expect(resumed)
        #expect(released == 10)
    }
}

/// One bound on a compressed message's reassembly, shared with the pcap reader (issue 15, item 10).
@Suite struct CompressedReassemblyTests {
    @Test func endlessContinuationFramesStopBeingGatheredAtMaxPayload() {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.maxPayload = 4_096
        var h = Harness(config: config)
        h.open(responseExtra: "Sec-WebSocket-Extensions: permessage-deflate\r\n")
        let first = Frame(fin: false, rsv1: true, opcode: .binary, payload: [UInt8](repeating: 1, count: 1_000))
        h.handle(.received(from: .server, bytes: Wire.fromServer(first)))
        var relayed = 1
        for _ in 0..<20 {
            let more = h.handle(.received(from: .server, bytes: Wire.fromServer(
                Frame(fin: false, opcode: .continuation, payload: [UInt8](repeating: 2, count: 1_000)))))
            relayed += more.frameRecords.count
        }
        #expect(relayed == 21, "every frame is still relayed")
        #expect(h.log.notes.filter { $0.message.contains("over 4096 bytes") }.count == 1)
        #expect(!h.session.server.recorder.inflates, "context takeover: the window is lost with the message")
    }
}
