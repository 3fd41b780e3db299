import Testing
import Vocabulary
@testable import Lifecycle

/// `channels.stale-auth`'s per-client list of sent auths (`ChannelsStaleAuth.SentAuths`):
/// a ring of dense entries whose room and channel table stay bounded however many auths and
/// channels a client sends.
@Suite struct SentAuthsTests {
    typealias SentAuths = ChannelsStaleAuth.SentAuths

    static func digest(_ n: Int) -> SentAuths.Digest { .init(first: UInt64(n), second: UInt64(n) &* 31) }

    @Test func anEntryIsFortyBytes() {
        #expect(MemoryLayout<SentAuths.Entry>.stride == 40)
    }

    /// The ring grows eight entries at a time up to its capacity (an array grown by
    /// doubling sat 39 entries in room for 64), then forgets the oldest, one per new auth.
    @Test func theRingGrowsInStepsAndForgetsTheOldestPastItsCapacity() {
        var sent = SentAuths(capacity: 20)
        for n in 1...9 { #expect(sent.append(Self.digest(n), t: Micros(n), conn: n, channel: "private-a") == nil) }
        #expect(sent.count == 9)
        // Room for 16 (two steps of eight), give or take malloc's rounding of the block.
        #expect(sent.room >= 9 && sent.room < 20)
        for n in 10...20 { #expect(sent.append(Self.digest(n), t: Micros(n), conn: n, channel: "private-a") == nil) }
        #expect(sent.room < 24)
        let forgotten = (21...45).map { n in sent.append(Self.digest(n), t: Micros(n), conn: n, channel: "private-a")?.conn }
        #expect(forgotten == (1...25).map { Optional($0) })
        #expect(sent.count == 20)
        #expect(sent.entry(of: Self.digest(25)) == nil)
        #expect(sent.entry(of: Self.digest(26))?.conn == 26)
        #expect(sent.entry(of: Self.digest(45))?.t == 45)
    }

    /// Each channel text is held once per client, and a client naming endless distinct
    /// channels keeps at most twice the ring's capacity of them: those the kept entries name.
    @Test func theChannelTableStaysBoundedAndEntriesKeepTheirChannels() {
        var sent = SentAuths(capacity: 4)
        _ = sent.append(Self.digest(1), t: 1, conn: 1, channel: "private-a")
        _ = sent.append(Self.digest(2), t: 2, conn: 2, channel: "private-a")
        #expect(sent.channelCount == 1)
        for n in 3...1000 { _ = sent.append(Self.digest(n), t: Micros(n), conn: n, channel: "private-\(n)") }
        #expect(sent.channelCount <= 8)
        for n in 997...1000 {
            let entry = sent.entry(of: Self.digest(n))
            #expect(entry.map { sent.channel(of: $0) } == "private-\(n)")
        }
    }
}
