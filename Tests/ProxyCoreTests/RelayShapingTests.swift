import Capture
import Faults
import Testing
import Vocabulary
import WebSocket
@testable import ProxyCore

/// The new kinds' verdicts carried out by the relay: frames cut up, copied, swapped, held.
@Suite struct RelayShapingTests {
    func harness(_ rules: String..., seed: UInt64 = 0) -> Harness {
        var h = Harness(faults: FaultEngine(rules: rules.map { try! FaultRule.parse($0) }, seed: seed))
        h.open()
        return h
    }

    /// Fires timers until nothing more is scheduled (bounded).
    func drain(_ h: inout Harness) -> [RelayCommand] {
        var out: [RelayCommand] = []
        var seen = Set<Int>()
        for _ in 0..<10_000 {
            guard let (id, at) = h.log.lazy.compactMap({ cmd -> (Int, Micros)? in
                if case .schedule(let id, let at) = cmd { (id, at) } else { nil }
            }).last, !seen.contains(id) else { break }
            seen.insert(id)
            out += h.handle(.timer(id: id), at: at)
        }
        return out
    }

    @Test func fragmentSendsAMessageAsContinuationFrames() throws {
        var h = harness("fragment:3")
        let message = Wire.event("news", data: #"{"text":"hello world"}"#)
        let commands = h.server(Wire.fromServer(message))
        let frames = try Wire.frames(commands.sent(to: .client))
        #expect(frames.map(\.opcode) == [.text, .continuation, .continuation])
        #expect(frames.map(\.fin) == [false, false, true])
        #expect(frames.flatMap(\.payload) == message.payload)
        #expect(commands.frameRecords.map(\.action) == [.dropped, .injected, .injected, .injected])
        #expect(commands.frameRecords.allSatisfy { $0.fault == "fragment:3" })
        // Client frames going upstream are masked, each fragment with its own key.
        let up = try Wire.frames(h.client(Wire.fromClient(Frame(opcode: .binary, payload: [1, 2, 3, 4, 5, 6]))).sent(to: .server))
        #expect(up.count == 3 && up.allSatisfy(\.isMasked))
    }

    @Test func slicerWritesPiecesAndRecordsTheFrameWhenItsLastPieceIsOut() throws {
        var h = harness("slicer,size=10,delay=1ms")
        let message = Wire.event("news", data: #"{"text":"a message long enough to be cut"}"#)
        let first = h.server(Wire.fromServer(message))
        let firstSends = first.filter { if case .send = $0 { true } else { false } }
        #expect(firstSends.count == 1)
        #expect(first.sent(to: .client).count == 10)
        #expect(first.frameRecords.isEmpty)
        let rest = drain(&h)
        #expect(first.sent(to: .client) + rest.sent(to: .client) == Wire.fromServer(message))
        #expect(rest.filter { if case .send = $0 { true } else { false } }.count > 3)
        #expect(rest.frameRecords.count == 1)
        // A frame right behind the sliced one waits for its last piece.
        #expect(h.log.frameRecords.last?.payload == message.payload)
    }

    @Test func slowCloseHoldsTheFINThenPassesIt() throws {
        var h = harness("slow-close:2s")
        let end = h.handle(.ended(side: .server, kind: .fin, detail: nil), at: 1_000_000)
        #expect(!end.contains(.shutdown(.client)))
        #expect(end.faults.first?.detail == "held the server's FIN for 2s")
        // Timer 1 is the handshake deadline, armed at accept.
        #expect(end.contains(.schedule(id: 2, at: 3_000_000)))
        let later = h.fireTimer()
        #expect(later.contains(.shutdown(.client)))
    }

    @Test func slowCloseHoldsTheCloseFrame() throws {
        var h = harness("slow-close:2s")
        let close = Frame.close(code: 1000)
        #expect(h.server(Wire.fromServer(close)).sent(to: .client).isEmpty)
        #expect(h.fireTimer().sent(to: .client) == Wire.fromServer(close))
    }

    @Test func duplicateSendsTheMessageTwice() throws {
        var h = harness("duplicate,event=news")
        let news = Wire.event("news")
        let commands = h.server(Wire.fromServer(news))
        #expect(commands.sent(to: .client) == Wire.fromServer(news) + Wire.fromServer(news))
        #expect(commands.frameRecords.map(\.action) == [.forwarded, .injected])
        #expect(h.server(Wire.fromServer(Wire.event("other"))).frameRecords.count == 1)
    }

    @Test func reorderSwapsAMessageWithTheNextOne() throws {
        var h = harness("reorder,event=first")
        let first = Wire.event("first"), second = Wire.event("second")
        #expect(h.server(Wire.fromServer(first)).sent(to: .client).isEmpty)
        let commands = h.server(Wire.fromServer(second))
        #expect(commands.sent(to: .client) == Wire.fromServer(second) + Wire.fromServer(first))
    }

    @Test func limitDataEndsBothSidesWithFIN() throws {
        var h = harness("limit-data:10")
        #expect(h.server(Wire.fromServer(Frame(opcode: .binary, payload: [UInt8](repeating: 1, count: 6)))).socketCommands.isEmpty)
        let over = h.server(Wire.fromServer(Frame(opcode: .binary, payload: [UInt8](repeating: 1, count: 6))))
        #expect(over.sent(to: .client).isEmpty)
        #expect(over.socketCommands == [.close(.client), .close(.server)])
        #expect(over.ends.map(\.kind) == [.fin, .fin])
    }

    @Test func timeoutSwallowsThenCloses() throws {
        var h = harness("timeout:5s")
        #expect(h.server(Wire.fromServer(.text("x"))).sent(to: .client).isEmpty)
        let end = h.fireTimer()
        #expect(h.now == 5_000_000)
        #expect(end.socketCommands == [.close(.client), .close(.server)])
    }

    @Test func cutKeepsEveryByte() {
        let bytes = Array(0..<UInt8(50))
        #expect(RelaySession.cut(bytes, sizes: [10, 10]).map(\.count) == [10, 40])
        #expect(RelaySession.cut(bytes, sizes: [30, 30, 30]).map(\.count) == [30, 20])
        #expect(RelaySession.fragments(of: .text("abcde"), count: 10).count == 5)
    }
}
