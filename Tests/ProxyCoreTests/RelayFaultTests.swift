import Capture
import Faults
import Testing
import WebSocket
@testable import ProxyCore

/// Fault verdicts turned into relay commands and records.
@Suite struct RelayFaultTests {
    func harness(_ rules: String..., seed: UInt64 = 0) -> Harness {
        Harness(faults: FaultEngine(rules: rules.map { try! FaultRule.parse($0) }, seed: seed))
    }

    @Test func stallPongsDropsPongsAndRecordsThem() throws {
        var h = harness("stall-pongs")
        h.open()
        #expect(h.log.faults.map(\.kind) == ["stall-pongs"])
        let pong = Wire.event("bird:pong")
        let commands = h.server(Wire.fromServer(pong))
        #expect(commands.sent(to: .client).isEmpty)
        #expect(commands.frameRecords.map(\.action) == [.dropped])
        #expect(commands.frameRecords.first?.fault == "stall-pongs")
        let other = Wire.event("news")
        #expect(h.server(Wire.fromServer(other)).sent(to: .client) == Wire.fromServer(other))
    }

    @Test func closeAfterADelayClosesTheClientAndTheUpstream() throws {
        var h = harness("close:4009,after=1s,reason=terminated")
        h.open()
        let schedule = try #require(h.log.last { if case .schedule = $0 { true } else { false } })
        #expect(schedule == .schedule(id: 2, at: 1_000_000))   // id 1: the handshake deadline
        let fired = h.fireTimer()
        let close = try #require(try Wire.frames(fired.sent(to: .client)).first)
        #expect(close.opcode == .close && !close.isMasked)
        #expect(try ClosePayload.parse(close.payload) == ClosePayload(code: 4009, reason: "terminated"))
        #expect(fired.socketCommands == [.close(.server)])
        #expect(fired.faults.first?.detail == "sent close 4009 'terminated' to client, closed server")
        #expect(fired.frameRecords.map(\.action) == [.injected])
        #expect(fired.frameRecords.first?.from == .server)
        // The client's reply ends it; nothing goes upstream any more.
        let reply = h.client(Wire.fromClient(.close(code: 4009)))
        #expect(reply.sent(to: .server).isEmpty)
        #expect(reply.frameRecords.map(\.action) == [.dropped])
        #expect(reply.socketCommands == [.close(.client)])
        #expect(h.session.isFinished)
    }

    @Test func closeWithoutAReplyClosesAfterATimeout() throws {
        var h = harness("close:4200")
        h.open()
        #expect(h.log.sent(to: .client).count > Wire.response101().count)
        let timeout = h.fireTimer()
        #expect(timeout.socketCommands == [.close(.client)])
        #expect(timeout.notes.first?.message.contains("no close reply") == true)
    }

    @Test func dropAndResetEndBothSides() {
        var drop = harness("drop,frames=1")
        drop.open()
        let dropped = drop.server(Wire.fromServer(.text("x")))
        #expect(dropped.sent(to: .client) == Wire.fromServer(.text("x")))   // after the first frame
        #expect(dropped.socketCommands == [.close(.client), .close(.server)])
        var reset = harness("reset")
        reset.open()
        #expect(reset.log.socketCommands.suffix(2) == [.reset(.client), .reset(.server)])
    }

    /// The sockets close at once, so no end is ever read from them: the session records what
    /// each peer saw (the other side's FIN or RST), or a reader could not tell when it ended.
    @Test func dropAndResetRecordWhatEachPeerSaw() {
        var drop = harness("drop,frames=1")
        drop.open()
        let dropped = drop.server(Wire.fromServer(.text("x")))
        let dropEnds = dropped.records.compactMap { if case .end(let e) = $0 { e } else { nil } }
        #expect(dropEnds.map(\.side) == [.server, .client])
        #expect(dropEnds.allSatisfy { $0.kind == .fin && $0.detail?.contains("drop") == true })
        var reset = harness("reset")
        reset.open()
        let resetEnds = reset.log.records.compactMap { if case .end(let e) = $0 { e } else { nil } }
        #expect(resetEnds.map(\.side) == [.server, .client])
        #expect(resetEnds.allSatisfy { $0.kind == .rst })
    }

    @Test func blackholeKeepsSocketsOpenAndForwardsNothing() {
        var h = harness("blackhole,dir=c2s")
        h.open()
        let up = h.client(Wire.fromClient(.text("lost")))
        #expect(up.sent(to: .server).isEmpty && up.socketCommands.isEmpty)
        #expect(up.frameRecords.map(\.action) == [.dropped])
        #expect(h.server(Wire.fromServer(.text("ok"))).sent(to: .client) == Wire.fromServer(.text("ok")))
    }

    @Test func blackholeSwallowsTheEndOfABlackholedSender() {
        var h = harness("blackhole,dir=s2c")
        h.open()
        let fin = h.handle(.ended(side: .server, kind: .fin, detail: nil))
        #expect(fin.ends.map(\.side) == [.server])   // recorded: it happened
        #expect(fin.socketCommands.isEmpty)            // but the client hears nothing
        #expect(fin.notes.first?.message.contains("blackhole") == true)
        let clientFin = h.handle(.ended(side: .client, kind: .fin, detail: nil))
        #expect(clientFin.socketCommands == [.close(.client), .close(.server)])
    }

    @Test func latencyDelaysFramesKeepingTheirOrder() throws {
        var h = harness("latency:100ms,dir=s2c")
        h.open()
        let first = h.handle(.received(from: .server, bytes: Wire.fromServer(.text("1"))), at: 1_000)
        #expect(first.sent(to: .client).isEmpty)
        #expect(first.contains(.schedule(id: 2, at: 101_000)))   // id 1: the handshake deadline
        h.handle(.received(from: .server, bytes: Wire.fromServer(.text("2"))), at: 2_000)
        let released = h.fireTimer()
        #expect(released.sent(to: .client) == Wire.fromServer(.text("1")))
        #expect(released.frameRecords.map(\.action) == [.delayed(100_000)])
        let second = h.fireTimer()
        #expect(second.sent(to: .client) == Wire.fromServer(.text("2")))
        #expect(second.frameRecords.first?.t == 102_000)
        // A FIN behind held frames waits for them.
        h.handle(.received(from: .server, bytes: Wire.fromServer(.text("3"))), at: 200_000)
        let fin = h.handle(.ended(side: .server, kind: .fin, detail: nil), at: 200_001)
        #expect(fin.socketCommands.isEmpty)
        let last = h.fireTimer()
        #expect(last.sent(to: .client) == Wire.fromServer(.text("3")))
        #expect(last.socketCommands == [.shutdown(.client)])
    }

    @Test func refuseHTTPAnswersWithoutTheUpstream() {
        var h = harness("refuse-http:503")
        let commands = h.client(Wire.request)
        #expect(String(decoding: commands.sent(to: .client), as: UTF8.self).hasPrefix("HTTP/1.1 503 Service Unavailable"))
        #expect(!commands.contains(.connectUpstream))
        #expect(commands.faults.first?.detail == "refused the upgrade with HTTP 503")
        // Recorded as the response the client saw, so a reader sees a refused upgrade.
        let responses = commands.records.compactMap { if case .upgrade(let u) = $0, u.from == .server { u } else { nil } }
        #expect(responses.map(\.status) == [503])
        #expect(commands.socketCommands == [.close(.client)])
        #expect(h.session.isFinished)
    }

    @Test func refuseAcceptsTheUpgradeThenClosesWithTheCode() throws {
        var h = harness("refuse:4001,reason=no such app")
        let commands = h.client(Wire.request)
        #expect(!commands.contains(.connectUpstream))
        let text = String(decoding: commands.sent(to: .client), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 "))
        #expect(text.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        var parser = HTTPHeadParser()
        parser.append(commands.sent(to: .client))
        _ = try parser.parseResponse()
        let close = try #require(try Wire.frames(parser.remainder).first)
        #expect(try ClosePayload.parse(close.payload) == ClosePayload(code: 4001, reason: "no such app"))
        #expect(commands.upgrades.map(\.from) == [.client, .server])
        let reply = h.client(Wire.fromClient(.close(code: 4001)))
        #expect(reply.socketCommands == [.close(.client)])
        #expect(h.session.isFinished)
    }

    @Test func stripSocketIDRecordsTheOriginalDroppedAndTheRewriteInjected() throws {
        var h = harness("strip-socket-id")
        h.open()
        let handshake = Frame.text(#"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}"#)
        let commands = h.server(Wire.fromServer(handshake))
        let relayed = try #require(try Wire.frames(commands.sent(to: .client)).first)
        #expect(String(decoding: relayed.payload, as: UTF8.self)
                == #"{"event":"bird:connection_established","data":"{\"activity_timeout\":120}"}"#)
        #expect(commands.frameRecords.map(\.action) == [.dropped, .injected])
        #expect(commands.frameRecords.allSatisfy { $0.fault == "strip-socket-id" })
        #expect(commands.faults.first?.detail == "removed socket_id 1.2 from the handshake")
    }

    @Test func injectOnAnEventSendsTheCraftedFrame() throws {
        var h = harness(#"inject:{"event":"bird:error","data":{"code":4009}},to=client,on=bird:subscribe"#)
        h.open()
        let commands = h.client(Wire.fromClient(Wire.event("bird:subscribe")))
        #expect(try Wire.frames(commands.sent(to: .server)).count == 1)   // the subscribe itself goes on
        let injected = try #require(try Wire.frames(commands.sent(to: .client)).first)
        #expect(String(decoding: injected.payload, as: UTF8.self) == #"{"event":"bird:error","data":{"code":4009}}"#)
        #expect(commands.frameRecords.map(\.action) == [.forwarded, .injected])
    }

    @Test func applyNowReachesTheSessionThroughFaultsChanged() throws {
        let engine = FaultEngine()
        var h = Harness(faults: engine)
        h.open()
        engine.applyNow(try FaultRule.parse("reset"), to: 1)
        let commands = h.handle(.faultsChanged)
        #expect(commands.socketCommands == [.reset(.client), .reset(.server)])
        #expect(commands.faults.first?.rule == "reset")
    }

    @Test func clientScopeUsesUserAgentAndTarget() {
        var matching = harness("drop,client=pysher")
        matching.open()
        #expect(matching.log.socketCommands.suffix(2) == [.close(.client), .close(.server)])
        var other = harness("drop,client=pusher-js")
        other.open()
        #expect(other.log.faults.isEmpty)
    }
}
