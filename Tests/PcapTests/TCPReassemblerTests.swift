import Testing
import Capture
@testable import Pcap

@Suite struct TCPReassemblerTests {
    @Test func inOrderAfterSYN() {
        var h = ReassemblyHarness()
        h.send(seq: 1000, flags: [.syn])
        h.send(seq: 1001, bytes("hello "))
        h.send(seq: 1007, bytes("world"))
        #expect(h.sink.events == [.data(bytes("hello world"))])
        let startedMidStream = h.reassembler.startedMidStream
        #expect(!startedMidStream)
    }

    @Test func outOfOrderSegmentsAreDeliveredInOrder() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 7, bytes("ccc"))
        h.send(seq: 4, bytes("bbb"))
        #expect(h.sink.events.isEmpty)
        h.send(seq: 1, bytes("aaa"))
        #expect(h.sink.events == [.data(bytes("aaabbbccc"))])
    }

    @Test func identicalRetransmissionIsSilentlyDropped() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("abcdef"))
        h.send(seq: 1, bytes("abcdef"))
        h.send(seq: 4, bytes("defgh"))  // overlaps the end, brings "gh"
        #expect(h.sink.events == [.data(bytes("abcdefgh"))])
    }

    @Test func conflictingRetransmissionKeepsTheFirstCopyAndIsReported() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("abcdef"))
        h.send(seq: 3, bytes("XdY"))
        #expect(h.sink.events == [.data(bytes("abcdef")), .conflict(offset: 2, count: 2)])
    }

    @Test func overlappingOutOfOrderCopiesFirstWins() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 6, bytes("FGHIJ"))     // offsets 5..<10, received first
        h.send(seq: 4, bytes("DExxxxxK"))  // offsets 3..<11: 5..<10 conflicts, "K" is new
        #expect(h.sink.events == [.conflict(offset: 5, count: 5)])
        h.send(seq: 1, bytes("ABC"))
        #expect(h.sink.bytes == bytes("ABCDEFGHIJK"))
    }

    @Test func sequenceNumbersWrapAround() {
        var h = ReassemblyHarness()
        h.send(seq: 0xFFFF_FFFA, flags: [.syn])
        h.send(seq: 0xFFFF_FFFB, bytes("0123"))
        h.send(seq: 0x0000_0003, bytes("89"))       // after the wrap, out of order
        h.send(seq: 0xFFFF_FFFF, bytes("4567"))     // straddles 2^32
        #expect(h.sink.events == [.data(bytes("0123456789"))])
        let nextOffset = h.reassembler.nextOffset
        #expect(nextOffset == 10)
    }

    @Test func midStreamStartPicksUpAtTheFirstSegment() {
        var h = ReassemblyHarness()
        h.send(seq: 5_000_000, bytes("partial"))
        let startedMidStream = h.reassembler.startedMidStream
        #expect(startedMidStream)
        #expect(h.sink.events == [.data(bytes("partial"))])
    }

    @Test func lossIsReportedWhenThePeerAcknowledgesBytesNeverSeen() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("aaaa"))
        h.send(seq: 9, bytes("cccc"))  // offsets 8..<12; 4..<8 never captured
        #expect(h.sink.events == [.data(bytes("aaaa"))])
        h.peerAck(13)
        #expect(h.sink.events == [.data(bytes("aaaa")), .gap(4, .lost), .data(bytes("cccc"))])
        h.send(seq: 5, bytes("bbbb"))  // a late copy of the lost bytes changes nothing
        #expect(h.sink.bytes == bytes("aaaacccc"))
    }

    @Test func finEndsTheStreamAfterItsData() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 4, bytes("def"), flags: [.ack, .fin])
        #expect(h.sink.events.isEmpty)
        h.send(seq: 1, bytes("abc"))
        #expect(h.sink.events == [.data(bytes("abcdef")), .end(.fin)])
        h.send(seq: 7, bytes("late"))
        #expect(h.sink.events.count == 2)
    }

    @Test func rstEndsAtOnceReportingTheHole() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("ab"))
        h.send(seq: 5, bytes("ef"))
        h.send(seq: 7, flags: [.rst])
        #expect(h.sink.events == [.data(bytes("ab")), .gap(2, .ended), .data(bytes("ef")), .end(.rst)])
    }

    @Test func snaplenTruncationBecomesAGapNotInventedBytes() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("abc"), missing: 5)
        h.send(seq: 9, bytes("xyz"))
        #expect(h.sink.events == [.data(bytes("abc")), .gap(5, .truncated), .data(bytes("xyz"))])
    }

    @Test func bufferLimitGivesUpOnTheHole() {
        var limits = TCPReassembler.Limits()
        limits.maxBufferedBytes = 8
        var h = ReassemblyHarness(limits: limits)
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 11, bytes("12345"))
        h.send(seq: 16, bytes("67890"))  // 10 bytes buffered > 8
        #expect(h.sink.events == [.gap(10, .limit), .data(bytes("1234567890"))])
    }

    @Test func captureEndFlushesHolesAndReportsAFinSeenOutOfOrder() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("a"))
        h.send(seq: 3, bytes("c"), flags: [.ack, .fin])
        h.finish()
        #expect(h.sink.events == [.data(bytes("a")), .gap(1, .ended), .data(bytes("c")), .end(.fin)])
    }
}

@Suite struct RetransmissionHistoryTests {
    @Test func conflictsAreFoundAcrossTheRingsWrapAndOldBytesAreForgotten() {
        var limits = TCPReassembler.Limits()
        limits.historySize = 8
        var h = ReassemblyHarness(limits: limits)
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("abcdef"))     // offsets 0..<6
        h.send(seq: 7, bytes("ghijk"))      // offsets 6..<11: the ring of 8 wraps
        h.send(seq: 5, bytes("eXgYi"))      // offsets 4..<9: two differ (5 and 7)
        #expect(h.sink.events.last == .conflict(offset: 5, count: 2))
        h.send(seq: 1, bytes("ZZZ"))        // offsets 0..<3: no longer remembered, not judged
        #expect(h.sink.events.last == .conflict(offset: 5, count: 2))
        #expect(h.sink.bytes == bytes("abcdefghijk"))
    }

    @Test func acknowledgedBytesAreForgottenAndUnacknowledgedOnesStillChecked() {
        var h = ReassemblyHarness()
        h.send(seq: 0, flags: [.syn])
        h.send(seq: 1, bytes("abcdef"))     // offsets 0..<6
        h.peerAck(4)                        // the peer has offsets 0..<3
        h.send(seq: 1, bytes("XYZ"))        // a copy of acknowledged bytes: not judged
        #expect(!h.sink.events.contains { if case .conflict = $0 { true } else { false } })
        h.send(seq: 3, bytes("cDeF"))       // offsets 2..<6: 2 acknowledged, 3 and 5 differ
        #expect(h.sink.events.last == .conflict(offset: 3, count: 2))
        #expect(h.sink.bytes == bytes("abcdef"))
    }

    @Test func aRingEmptiedByAcknowledgementsStartsAgainAndStillGrows() {
        var h = ReassemblyHarness()  // the ring starts at 256 bytes
        h.send(seq: 0, flags: [.syn])
        let first = (0..<200).map { UInt8(truncatingIfNeeded: $0) }
        let second = (0..<150).map { UInt8(truncatingIfNeeded: $0 * 3) }
        let third = (0..<2000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        h.send(seq: 1, first)
        h.peerAck(201)                      // all acknowledged: the ring is empty
        h.send(seq: 201, second)            // stored from the ring's first byte again
        h.send(seq: 351, third)             // grows the ring while `second` is unacknowledged
        var copy = second
        copy[149] ^= 0xFF
        h.send(seq: 201, copy)
        #expect(h.sink.events.last == .conflict(offset: 349, count: 1))
        var late = third
        late[1999] ^= 0xFF
        late[0] ^= 0xFF
        h.send(seq: 351, late)
        #expect(h.sink.events.last == .conflict(offset: 350, count: 2))
        h.send(seq: 1, first.map { $0 ^ 0xFF })  // acknowledged long ago: not judged
        #expect(h.sink.events.last == .conflict(offset: 350, count: 2))
        #expect(h.sink.bytes == first + second + third)
    }

    @Test func theRingGrowsWithTrafficAndKeepsWhatItHeld() {
        var h = ReassemblyHarness()  // 16 KiB limit; the ring starts at 256 bytes
        h.send(seq: 0, flags: [.syn])
        let first = (0..<900).map { UInt8(truncatingIfNeeded: $0) }
        let second = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        h.send(seq: 1, first)
        h.send(seq: 901, second)          // grows the ring past 1 KiB
        var copy = first
        copy[10] ^= 0xFF
        h.send(seq: 1, copy)              // offset 10 differs, from before the growth
        #expect(h.sink.events.last == .conflict(offset: 10, count: 1))
        h.send(seq: 901, second)          // an identical copy: no new conflict
        #expect(h.sink.events.filter { if case .conflict = $0 { true } else { false } }.count == 1)
    }
}
