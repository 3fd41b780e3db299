import Capture
import Testing
@testable import Faults
import Vocabulary

/// toxiproxy-like kinds (bandwidth, slicer, slow-close, limit-data, timeout) on their own,
/// with a fake clock: the verdicts each gives for the events it is shown.
@Suite struct NetworkKindTests {
    func frame(_ size: Int, from side: Side = .server) -> FaultFrame {
        FaultFrame(from: side, opcode: .binary, payload: [UInt8](repeating: 7, count: size))
    }

    func armed<F: Fault>(_ fault: inout F, at now: Micros = 0) -> FaultVerdict {
        var context = Make.context(now)
        return fault.apply(.armed, context: &context)
    }

    func verdict<F: Fault>(_ fault: inout F, _ event: FaultEvent, at now: Micros, seed: UInt64 = 1) -> FaultVerdict {
        var context = Make.context(now, seed: seed)
        return fault.apply(event, context: &context)
    }

    @Test func bandwidthSpacesFramesAtTheRateAndForgetsIdleTime() throws {
        var fault = try Bandwidth(Make.rule("bandwidth:64KB/s,dir=s2c"))
        #expect(armed(&fault).report == "limiting bandwidth to 64KB/s from the server")
        // 6400 bytes at 64,000 B/s take 100 ms; a second one right behind waits for the first.
        #expect(verdict(&fault, .frame(frame(6400)), at: 0).frame == .delay(100_000))
        #expect(verdict(&fault, .frame(frame(6400)), at: 0).frame == .delay(200_000))
        #expect(verdict(&fault, .frame(frame(6400, from: .client)), at: 0).frame == .pass)
        // After the link went idle, a frame only pays its own time.
        #expect(verdict(&fault, .frame(frame(640)), at: 1_000_000).frame == .delay(10_000))
    }

    @Test func bandwidthReadsRatesAndRefusesBadOnes() throws {
        #expect(try Bandwidth(Make.rule("bandwidth:1MB/s")).rate == 1_000_000)
        #expect(try Bandwidth(Make.rule("bandwidth:64KiB/s")).rate == 65_536)
        #expect(try Bandwidth(Make.rule("bandwidth:512B/s")).rate == 512)
        for bad in ["bandwidth:64KB", "bandwidth:64", "bandwidth:fast/s", "bandwidth:0B/s", "bandwidth"] {
            #expect(throws: FaultRuleError.self, "\(bad)") { try FaultRule.parse(bad) }
        }
    }

    @Test func slicerCutsTheWholeFrameIntoBoundedPiecesRepeatably() throws {
        func pieces(seed: UInt64) throws -> ([Int], Micros) {
            var fault = try Slicer(Make.rule("slicer,size=10,variation=4,delay=2ms"))
            _ = armed(&fault)
            guard case .slice(let pieces, let gap) = verdict(&fault, .frame(frame(200)), at: 0, seed: seed).frame
            else { return ([], 0) }
            return (pieces, gap)
        }
        let (first, gap) = try pieces(seed: 5)
        #expect(gap == 2_000)
        let total: Int = first.reduce(0, +)
        #expect(total == 204)   // header 2, 16-bit length 2, payload 200 (server: no mask)
        #expect(first.dropLast().allSatisfy { (6...14).contains($0) })
        #expect(try pieces(seed: 5).0 == first)
        #expect(try pieces(seed: 6).0 != first)
    }

    @Test func slicerDefaultsAndLimits() throws {
        var fault = try Slicer(Make.rule("slicer,dir=c2s"))
        #expect(armed(&fault).report == "slicing frames into 16 +/- 8-byte writes 1ms apart")
        #expect(verdict(&fault, .frame(frame(100)), at: 0).frame == .pass)   // server frames untouched
        guard case .slice(let pieces, _) = verdict(&fault, .frame(frame(1_000_000, from: .client)), at: 0).frame else {
            Issue.record("not sliced")
            return
        }
        #expect(pieces.count == Slicer.maxPieces)
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("slicer,size=8,variation=8") }
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("slicer:5") }
    }

    @Test func slowCloseHoldsCloseFramesAndFINs() throws {
        var fault = try SlowClose(Make.rule("slow-close:3s,dir=s2c"))
        _ = armed(&fault)
        let close = FaultFrame(from: .server, opcode: .close, payload: [0x03, 0xE8])
        #expect(verdict(&fault, .frame(close), at: 0).frame == .delay(3_000_000))
        #expect(verdict(&fault, .frame(frame(10)), at: 0).frame == .pass)
        #expect(verdict(&fault, .streamEnded(from: .server), at: 0).frame == .delay(3_000_000))
        #expect(verdict(&fault, .streamEnded(from: .client), at: 0).frame == .pass)
        var clientClose = close
        clientClose.from = .client
        #expect(verdict(&fault, .frame(clientClose), at: 0).frame == .pass)
    }

    @Test func limitDataEndsTheConnectionAtTheLimit() throws {
        var fault = try LimitData(Make.rule("limit-data:100"))
        _ = armed(&fault)
        #expect(verdict(&fault, .frame(frame(60)), at: 0) == .pass)
        let over = verdict(&fault, .frame(frame(60, from: .client)), at: 0)
        #expect(over.frame == .drop && over.effects == [.drop])
        #expect(over.report == "limit of 100 bytes reached after 60: ended both connections with FIN")
        var exact = try LimitData(Make.rule("limit-data:1KB,dir=c2s"))
        _ = armed(&exact)
        #expect(verdict(&exact, .frame(frame(5000)), at: 0) == .pass)   // other direction
        let reached = verdict(&exact, .frame(frame(1000, from: .client)), at: 0)
        #expect(reached.frame == .pass && reached.effects == [.drop])
        #expect(verdict(&exact, .frame(frame(1, from: .client)), at: 0) == .pass)   // fired once
    }

    @Test func timeoutSwallowsEverythingThenEndsBothConnections() throws {
        var fault = try Timeout(Make.rule("timeout:5s"))
        let start = armed(&fault, at: 1_000_000)
        #expect(start.wakeup == 6_000_000)
        #expect(verdict(&fault, .frame(frame(10)), at: 2_000_000).frame == .drop)
        #expect(verdict(&fault, .streamEnded(from: .client), at: 2_000_000).frame == .drop)
        #expect(verdict(&fault, .timer, at: 5_999_999) == .pass)
        let end = verdict(&fault, .timer, at: 6_000_000)
        #expect(end.effects == [.drop])
        var forever = try Timeout(Make.rule("timeout:0s"))
        #expect(armed(&forever).wakeup == nil)
        #expect(verdict(&forever, .frame(frame(1, from: .client)), at: 99_000_000).frame == .drop)
    }
}
