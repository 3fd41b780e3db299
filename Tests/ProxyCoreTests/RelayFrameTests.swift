import Capture
import Faults
import Testing
import Vocabulary
import WebSocket
@testable import ProxyCore

@Suite struct RelayFrameTests {
    @Test func fullSessionWithCloseHandshake() throws {
        var harness = Harness()
        harness.open()
        let subscribe = Wire.event("bird:subscribe", data: #"{"channel":"news"}"#)
        let up = harness.handle(.received(from: .client, bytes: Wire.fromClient(subscribe)), at: 100)
        let upFrames = try Wire.frames(up.sent(to: .server))
        #expect(upFrames.count == 1)
        #expect(upFrames[0].payload == subscribe.payload && upFrames[0].opcode == .text && upFrames[0].isMasked)
        #expect(up.frameRecords == [FrameRecord(conn: 1, t: 100, from: .client, opcode: .text, masked: true,
                                                payload: subscribe.payload)])

        let event = Wire.event("news", data: #""{\"a\":1}""#)
        let down = harness.handle(.received(from: .server, bytes: Wire.fromServer(event)), at: 200)
        #expect(down.sent(to: .client) == Wire.fromServer(event))
        #expect(down.frameRecords.map(\.from) == [.server])

        let ping = Frame(opcode: .ping, payload: [7])
        #expect(try Wire.frames(harness.client(Wire.fromClient(ping)).sent(to: .server)).map(\.opcode) == [.ping])
        let pong = Frame(opcode: .pong, payload: [7])
        #expect(harness.server(Wire.fromServer(pong)).sent(to: .client) == Wire.fromServer(pong))

        let close = Frame.close(code: 1000, reason: "bye")
        let closeUp = harness.handle(.received(from: .client, bytes: Wire.fromClient(close)), at: 300)
        #expect(try Wire.frames(closeUp.sent(to: .server)).map(\.payload) == [close.payload])
        #expect(closeUp.socketCommands.isEmpty)
        #expect(closeUp.frameRecords.first?.closeCode == 1000)
        let reply = Frame.close(code: 1000, reason: "bye")
        let closeDown = harness.handle(.received(from: .server, bytes: Wire.fromServer(reply)), at: 400)
        #expect(closeDown.sent(to: .client) == Wire.fromServer(reply))
        // The handshake is over; each peer's TCP end is passed on as it comes
        // (`RelayEndsTests`): the server's FIN, then the client's.
        #expect(closeDown.socketCommands.isEmpty)
        let serverFin = harness.handle(.ended(side: .server, kind: .fin, detail: nil), at: 450)
        #expect(serverFin.socketCommands == [.shutdown(.client)])
        let clientFin = harness.handle(.ended(side: .client, kind: .fin, detail: nil), at: 500)
        #expect(clientFin.socketCommands == [.close(.client), .close(.server)])
        // Every end on both legs, as each peer saw it (issue 17 items 1 and 2).
        #expect(serverFin.ends + clientFin.ends == [
            EndRecord(conn: 1, t: 450, side: .server, kind: .fin, leg: .upstream),
            EndRecord(conn: 1, t: 450, side: .server, kind: .fin, detail: "passed on by the proxy to the client", leg: .client),
            EndRecord(conn: 1, t: 500, side: .client, kind: .fin, leg: .client),
            EndRecord(conn: 1, t: 500, side: .client, kind: .fin, detail: "sent by the proxy to the server", leg: .upstream),
        ])
        #expect(harness.session.isFinished)
    }

    @Test func framesSplitAcrossReadsKeepTheirBoundaries() throws {
        var harness = Harness()
        harness.open()
        let frames = [Frame.text("one"), Frame(opcode: .binary, payload: Array(0..<200)), Frame.text("three", fin: false),
                      Frame(fin: true, opcode: .continuation, payload: Array("!".utf8))]
        var wire: [UInt8] = []
        for frame in frames { wire += Wire.fromServer(frame) }
        var relayed: [UInt8] = []
        var records: [FrameRecord] = []
        for chunk in stride(from: 0, to: wire.count, by: 7).map({ Array(wire[$0..<min($0 + 7, wire.count)]) }) {
            let commands = harness.server(chunk)
            relayed += commands.sent(to: .client)
            records += commands.frameRecords
        }
        #expect(relayed == wire)   // server frames go through byte for byte
        #expect(records.map(\.opcode) == [.text, .binary, .text, .continuation])
        #expect(records.map(\.fin) == [true, true, false, true])
        #expect(try Wire.frames(relayed) == frames)
    }

    @Test func clientFramesAreReMaskedWithFreshKeys() throws {
        var harness = Harness(maskSeed: 5)
        harness.open()
        let frame = Frame(opcode: .binary, payload: Array(repeating: 0xAB, count: 64))
        let first = try Wire.frames(harness.client(Wire.fromClient(frame)).sent(to: .server))[0]
        let second = try Wire.frames(harness.client(Wire.fromClient(frame)).sent(to: .server))[0]
        #expect(first.payload == frame.payload && second.payload == frame.payload)
        #expect(first.maskingKey != nil && first.maskingKey != Wire.clientKey)
        #expect(first.maskingKey != second.maskingKey)
        // Same seed, same keys: runs repeat.
        var again = Harness(maskSeed: 5)
        again.open()
        #expect(try Wire.frames(again.client(Wire.fromClient(frame)).sent(to: .server))[0].maskingKey == first.maskingKey)
    }

    @Test func rsvBitsAndReservedOpcodesAreRelayedAndNoted() throws {
        var harness = Harness()
        harness.open()
        let odd = Frame(fin: true, rsv2: true, opcode: Opcode(rawValue: 0x3), payload: [1, 2, 3])
        let commands = harness.server(Wire.fromServer(odd))
        #expect(commands.sent(to: .client) == Wire.fromServer(odd))
        let record = try #require(commands.frameRecords.first)
        #expect(record.rsv2 && record.opcode.rawValue == 0x3 && record.action == .forwarded)
        #expect(record.protocolError != nil)
        #expect(commands.socketCommands.isEmpty)
    }

    @Test func badUTF8IsRelayedTransparentlyButFailsTheConnectionWhenStrict() throws {
        let bad = Frame(opcode: .text, payload: [0x68, 0xFF, 0x69])
        var transparent = Harness()
        transparent.open()
        let relayed = transparent.server(Wire.fromServer(bad))
        #expect(relayed.sent(to: .client) == Wire.fromServer(bad))
        #expect(relayed.frameRecords.first?.protocolError != nil)

        var strict = Harness(config: RelayConfig(upstreamHost: "upstream.test:9000", strict: true))
        strict.open()
        let failed = strict.server(Wire.fromServer(bad))
        #expect(failed.sent(to: .client).isEmpty)
        let close = try #require(try Wire.frames(failed.sent(to: .server)).first)
        #expect(close.opcode == .close && close.isMasked)
        #expect(try ClosePayload.parse(close.payload).code == 1007)
        #expect(failed.frameRecords.map(\.action) == [.dropped, .injected])
        #expect(failed.notes.first?.level == .error)
        #expect(failed.socketCommands == [.close(.client), .close(.server)])
    }

    @Test func strictRejectsReservedBitsFromTheClientWith1002() throws {
        var strict = Harness(config: RelayConfig(upstreamHost: "upstream.test:9000", strict: true))
        strict.open()
        let failed = strict.client(Wire.fromClient(Frame(rsv3: true, opcode: .text, payload: Array("x".utf8))))
        #expect(failed.sent(to: .server).isEmpty)
        let close = try #require(try Wire.frames(failed.sent(to: .client)).first)
        #expect(!close.isMasked)
        #expect(try ClosePayload.parse(close.payload).code == 1002)
    }

    @Test func oversizeFrameEndsThePairWith1009ToTheOffender() throws {
        var harness = Harness(config: RelayConfig(upstreamHost: "upstream.test:9000", maxPayload: 16))
        harness.open()
        let commands = harness.client(Wire.fromClient(Frame(opcode: .binary, payload: Array(repeating: 1, count: 17))))
        let close = try #require(try Wire.frames(commands.sent(to: .client)).first)
        #expect(try ClosePayload.parse(close.payload).code == 1009)
        #expect(commands.sent(to: .server).isEmpty)
        #expect(commands.notes.first?.message.contains("1009") == true)
        #expect(commands.socketCommands == [.close(.client), .close(.server)])
    }

    @Test func finIsPropagatedAsShutdownThenBothClose() {
        var harness = Harness()
        harness.open()
        let first = harness.handle(.ended(side: .client, kind: .fin, detail: nil), at: 50)
        #expect(first.ends == [EndRecord(conn: 1, t: 50, side: .client, kind: .fin, leg: .client),
                               EndRecord(conn: 1, t: 50, side: .client, kind: .fin,
                                         detail: "passed on by the proxy to the server", leg: .upstream)])
        #expect(first.socketCommands == [.shutdown(.server)])
        // The server may still talk until it ends too.
        #expect(harness.server(Wire.fromServer(.text("last"))).sent(to: .client) == Wire.fromServer(.text("last")))
        let second = harness.handle(.ended(side: .server, kind: .fin, detail: nil), at: 60)
        #expect(second.socketCommands == [.close(.client), .close(.server)])
        #expect(harness.session.isFinished)
    }

    @Test func resetIsPropagatedAsReset() {
        var harness = Harness()
        harness.open()
        let commands = harness.handle(.ended(side: .server, kind: .rst, detail: "ECONNRESET"), at: 70)
        #expect(commands.ends == [EndRecord(conn: 1, t: 70, side: .server, kind: .rst, detail: "ECONNRESET", leg: .upstream),
                                  EndRecord(conn: 1, t: 70, side: .server, kind: .rst,
                                            detail: "sent by the proxy to the client", leg: .client)])
        #expect(commands.socketCommands == [.reset(.client), .close(.server)])
        #expect(harness.session.isFinished)
    }

    @Test func compressedMessagesAreRelayedUntouchedAndRecordedInflated() throws {
        var harness = Harness()
        harness.open(responseExtra: "Sec-WebSocket-Extensions: permessage-deflate\r\n")
        let compressed = Frame(rsv1: true, opcode: .text, payload: [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00])
        let commands = harness.server(Wire.fromServer(compressed))
        #expect(commands.sent(to: .client) == Wire.fromServer(compressed))
        let record = try #require(commands.frameRecords.first)
        #expect(record.compressed && record.rsv1)
        #expect(record.text == "Hello")
        #expect(record.length == 7)
        #expect(record.protocolError == nil)   // RSV1 is allowed once deflate was agreed
    }

    @Test func aMessageThatFailsToInflateIsNotedAndStillRelayed() throws {
        var harness = Harness()
        harness.open(responseExtra: "Sec-WebSocket-Extensions: permessage-deflate\r\n")
        let broken = Frame(rsv1: true, opcode: .text, payload: [0xff, 0xff, 0xff, 0xff])
        let commands = harness.server(Wire.fromServer(broken))
        #expect(commands.sent(to: .client) == Wire.fromServer(broken))
        #expect(commands.frameRecords.first?.compressed == false)
        #expect(commands.frameRecords.first?.payload == broken.payload)
        #expect(commands.notes.first?.message.contains("could not inflate") == true)
    }
}

@Suite struct RelayHelperTests {
    @Test func closeReasonsAreCutOnCharacterBoundaries() {
        let text = String(repeating: "é", count: 100)   // 200 bytes
        let cut = RelaySession.truncated(text, toUTF8Bytes: 123)
        #expect(cut.utf8.count == 122)
        #expect(cut == String(repeating: "é", count: 61))
        #expect(RelaySession.truncated("short", toUTF8Bytes: 123) == "short")
    }

    @Test func clientKeyIsUserAgentAndTarget() {
        let request = HTTPRequestHead(method: "GET", target: "/app/k?client=js",
                                      headers: [HeaderField("user-agent", "pusher-js/8")])
        #expect(ClientScopeText.derive(from: request) == "pusher-js/8 /app/k?client=js")
        #expect(ClientScopeText.derive(from: HTTPRequestHead(method: "GET", target: "/", headers: [])) == "- /")
    }
}

@Suite struct RelaySplitTests {
    /// The same traffic fed whole and in random splits gives the same frames both ways.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomSplitsChangeNothing(seed: UInt64) throws {
        var frames: [Frame] = [Wire.event("bird:subscribe"), Frame(opcode: .binary, payload: Array(repeating: 9, count: 300)),
                               Frame.text("part", fin: false), Frame(opcode: .ping, payload: [1]),
                               Frame(opcode: .continuation, payload: Array("end".utf8)),
                               Frame(opcode: .binary, payload: Array(repeating: 3, count: 70_000))]
        frames.append(.close(code: 4009, reason: "done"))
        var wire: [UInt8] = []
        for frame in frames { wire += Wire.fromClient(frame) }

        var generator = SeededGenerator(seed: seed)
        var harness = Harness()
        var upstream: [UInt8] = []
        var rest = Wire.request + wire
        var records: [FrameRecord] = []
        while !rest.isEmpty {
            let size = min(rest.count, Int(generator.next() % 200) + 1)
            var commands = harness.client(Array(rest.prefix(size)))
            rest.removeFirst(size)
            if commands.contains(.connectUpstream) {
                commands += harness.handle(.upstreamConnected)
                commands += harness.server(Wire.response101())
            }
            upstream += commands.sent(to: .server)
            records += commands.frameRecords
        }
        var parser = HTTPHeadParser()
        parser.append(upstream)
        _ = try #require(try parser.parseRequest())
        let relayed = try Wire.frames(parser.remainder)
        #expect(relayed.map(\.payload) == frames.map(\.payload))
        #expect(relayed.map(\.opcode) == frames.map(\.opcode))
        #expect(relayed.map(\.fin) == frames.map(\.fin))
        #expect(records.map(\.payload) == frames.map(\.payload))
        #expect(records.allSatisfy { $0.protocolError == nil })
    }

    @Test func nonMinimalLengthIsNotedAndStrictRejectsIt() throws {
        // A 5-byte text frame with its length in the 16-bit form.
        let wire: [UInt8] = [0x81, 126, 0, 5] + Array("hello".utf8)
        var transparent = Harness()
        transparent.open()
        let relayed = transparent.server(wire)
        #expect(relayed.sent(to: .client) == FrameEncoder.encode(.text("hello")))
        #expect(relayed.frameRecords.first?.protocolError?.contains("minimal") == true)
        var strict = Harness(config: RelayConfig(upstreamHost: "u:1", strict: true))
        strict.open()
        let failed = strict.server(wire)
        #expect(failed.sent(to: .client).isEmpty)
        #expect(try ClosePayload.parse(try Wire.frames(failed.sent(to: .server))[0].payload).code == 1002)
    }

    /// Whole frames skip the decoder's buffer; the non-minimal-length note belongs to the
    /// frame that had it, not to the whole frames read after it.
    @Test func aNonMinimalFrameDoesNotMarkTheFramesAfterIt() throws {
        var harness = Harness()
        harness.open()
        let odd = harness.server([0x81, 126, 0, 5] + Array("hello".utf8))
        #expect(odd.frameRecords.first?.protocolError?.contains("minimal") == true)
        let plain = harness.server(FrameEncoder.encode(.text("world")) + FrameEncoder.encode(Frame(opcode: .binary, payload: [1, 2, 3])))
        #expect(plain.frameRecords.map { $0.protocolError } == [nil, nil])
        #expect(plain.sent(to: .client) == FrameEncoder.encode(.text("world")) + FrameEncoder.encode(Frame(opcode: .binary, payload: [1, 2, 3])))
    }

    /// Reads that end mid-frame, then carry whole frames and the start of the next: every
    /// frame is relayed once, in order, whichever path (straight from the read, or through
    /// the decoder's buffer) it took.
    @Test func wholeAndSplitFramesInterleaveAcrossReads() throws {
        let frames: [Frame] = [.text("first"), Frame(opcode: .binary, payload: Array(repeating: 7, count: 300)), .text("third"),
                               Frame(opcode: .binary, payload: Array(0..<200)), .text("last")]
        let wire = frames.flatMap { FrameEncoder.encode($0) }
        // Cut points: inside frame 1, between frames 2 and 3, inside frame 4's header.
        let first = FrameEncoder.encode(frames[0]).count
        let second = first + FrameEncoder.encode(frames[1]).count
        let fourth = second + FrameEncoder.encode(frames[2]).count
        let cuts = [3, first + 100, fourth + 1, wire.count]
        var harness = Harness()
        harness.open()
        var sent: [UInt8] = []
        var records: [FrameRecord] = []
        var start = 0
        for cut in cuts {
            let result = harness.server(Array(wire[start..<cut]))
            sent += result.sent(to: .client)
            records += result.frameRecords
            start = cut
        }
        #expect(sent == wire)
        #expect(records.map(\.payload) == frames.map(\.payload))
        #expect(records.allSatisfy { $0.protocolError == nil })
    }
}


@Suite struct RelayUnrelayableTests {
    @Test func anUnparseableHeaderEndsThePairWith1002ToTheOffender() throws {
        var harness = Harness()
        harness.open()
        // A 64-bit length with its top bit set: no frame can follow.
        let commands = harness.server([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0])
        #expect(commands.sent(to: .client).isEmpty)
        let close = try #require(try Wire.frames(commands.sent(to: .server)).first)
        #expect(close.isMasked)   // it goes upstream, so the proxy masks it like a client
        #expect(try ClosePayload.parse(close.payload).code == 1002)
        #expect(commands.notes.first?.level == .error)
        #expect(commands.frameRecords.map(\.action) == [.injected])
        #expect(commands.socketCommands == [.close(.client), .close(.server)])
    }

    @Test func injectedFramesOnCompressedConnectionsAreSentUncompressed() throws {
        var harness = Harness(faults: FaultEngine(rules: [try FaultRule.parse(#"inject:{"event":"x"}"#)]))
        harness.open(responseExtra: "Sec-WebSocket-Extensions: permessage-deflate\r\n")
        var parser = HTTPHeadParser()
        parser.append(harness.log.sent(to: .client))
        _ = try parser.parseResponse()
        let injected = try #require(try Wire.frames(parser.remainder).first)
        #expect(!injected.rsv1 && injected.payload == Array(#"{"event":"x"}"#.utf8))
    }
}
