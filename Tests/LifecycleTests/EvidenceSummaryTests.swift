import Capture
import Protocols
import Testing
import Vocabulary
import WebSocket
@testable import Lifecycle

/// Evidence keeps a frame's facts and spells its summary out only when read
/// (`EvidenceSummary`): what it reads must be what reports have always printed.
@Suite struct EvidenceSummaryTests {
    static func frame(_ opcode: Opcode, _ payload: [UInt8], from side: Side = .server,
                      action: FrameAction = .forwarded) -> FrameRecord {
        FrameRecord(conn: 7, t: 1_500_000, from: side, opcode: opcode, masked: side == .client, payload: payload, action: action)
    }

    static func summary(_ record: FrameRecord, _ event: RealtimeEvent? = nil) -> String {
        Evidence(conn: record.conn, t: record.t, from: record.from, facts: .of(record, event)).summary
    }

    @Test func aFrameWithAnEventShowsItsNameAndChannel() {
        let subscribed = RealtimeEvent(name: "bird_internal:subscription_succeeded", channel: "private-user-3",
                                       data: nil, rawData: nil, kind: .subscriptionSucceeded)
        #expect(Self.summary(Self.frame(.text, Array("{}".utf8)), subscribed)
                == "text bird_internal:subscription_succeeded private-user-3")
        let ping = RealtimeEvent(name: "bird:ping", channel: nil, data: nil, rawData: nil, kind: .ping)
        #expect(Self.summary(Self.frame(.text, Array("{}".utf8), from: .client), ping) == "text bird:ping")
        #expect(Self.summary(Self.frame(.text, Array("{}".utf8), action: .dropped), ping) == "text bird:ping (dropped)")
        #expect(Self.summary(Self.frame(.text, Array("{}".utf8), action: .delayed(5)), ping) == "text bird:ping (delayed)")
        #expect(Self.summary(Self.frame(.text, Array("{}".utf8), action: .observed), ping) == "text bird:ping")
    }

    @Test func aCloseFrameShowsItsCodeAndReasonBeforeAnyEvent() {
        let close = Self.frame(.close, [0x10, 0x69] + Array("pong timeout".utf8), from: .client)
        #expect(Self.summary(close) == "close 4201 'pong timeout'")
        #expect(Self.summary(Self.frame(.close, [0x03, 0xE8], action: .injected)) == "close 1000 (injected)")
        #expect(Self.summary(Self.frame(.close, [])) == "close")
        // Lenient decoding of the reason, as the record's `closeReason` does.
        #expect(Self.summary(Self.frame(.close, [0x03, 0xE8, 0xFF])) == "close 1000 '\u{FFFD}'")
    }

    @Test func aTextFrameWithoutAnEventShowsItsBodyCutAtSixtyCharacters() {
        #expect(Self.summary(Self.frame(.text, Array("hello".utf8))) == "text hello")
        let long = String(repeating: "é", count: 61)
        #expect(Self.summary(Self.frame(.text, Array(long.utf8))) == "text " + String(repeating: "é", count: 57) + "...")
        #expect(Self.summary(Self.frame(.text, [0xFF, 0xFE])) == "text")
        #expect(Self.summary(Self.frame(.binary, [1, 2, 3])) == "binary")
        #expect(Self.summary(Self.frame(.ping, [1, 2, 3], from: .client)) == "ping")
    }

    /// A payload over `maximumKeptPayload` is summarized at once instead of kept alive by
    /// the evidence, and reads the same.
    @Test func aLongPayloadIsSummarizedAtOnceAndReadsTheSame() {
        let body = String(repeating: "x", count: EvidenceSummary.maximumKeptPayload + 1)
        let record = Self.frame(.text, Array(body.utf8))
        guard case .given(let text) = EvidenceSummary.of(record, nil) else {
            Issue.record("a long payload was kept")
            return
        }
        #expect(text == "text " + String(repeating: "x", count: 57) + "...")
        let short = Self.frame(.text, Array(String(repeating: "x", count: 70).utf8))
        guard case .frame(_, _, let kept) = EvidenceSummary.of(short, nil) else {
            Issue.record("a short payload was not kept")
            return
        }
        #expect(kept == short.payload)
        #expect(Self.summary(short) == text)
    }

    /// Evidence is equal, and hashes alike, by what it reads, whether spelled out or kept as facts.
    @Test func evidenceIsEqualByWhatItReads() {
        let record = Self.frame(.close, [0x0F, 0xA1])
        let kept = Evidence(conn: 7, t: record.t, from: .server, facts: .of(record, nil))
        let given = Evidence(conn: 7, t: record.t, from: .server, summary: "close 4001")
        #expect(kept == given)
        #expect(kept.hashValue == given.hashValue)
        #expect(Evidence(conn: 7, t: 1, from: .client, "subscribe", "private-a")
                == Evidence(conn: 7, t: 1, from: .client, summary: "subscribe private-a"))
        #expect(kept != Evidence(conn: 7, t: record.t, from: .server, summary: "close 4002"))
    }
}
