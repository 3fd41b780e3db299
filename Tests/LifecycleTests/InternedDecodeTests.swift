import Bird
import Capture
import Testing
import TestSupport
import Protocols

/// `BirdDecoder.decode` takes names and channels from its tables (`InternedStrings`) once
/// it saw them: it must give exactly the event the table-free path gives (the envelope,
/// then `adopt`), prefix learning included, on every text frame of the sample captures and
/// past the tables' limits.
@Suite struct InternedDecodeTests {
    /// Decodes `payloads` both ways, one decoder each, and compares every event and the
    /// prefix learned after each.
    static func compareBothWays(_ payloads: [[UInt8]], prefix: String? = nil) {
        var interned = BirdDecoder(prefix: prefix)
        var plain = BirdDecoder(prefix: prefix)
        for payload in payloads {
            let fast = interned.decode(payload)
            let reference = BirdDecoder.envelope(payload).flatMap { plain.adopt($0) }
            #expect(fast == reference, "\(String(decoding: payload, as: UTF8.self))")
            #expect(fast?.kind == reference?.kind)
            #expect(interned.prefix == plain.prefix)
        }
    }

    static func texts(_ path: String) throws -> [[UInt8]] {
        var reader = try CaptureReader(path: path)
        var payloads: [[UInt8]] = []
        while let record = try reader.nextRecord() {
            if case .frame(let frame) = record, frame.opcode == .text { payloads.append(frame.payload) }
        }
        return payloads
    }

    @Test func theSampleCapturesDecodeAlikeBothWays() throws {
        var total = 0
        for path in StepFilterTests.sampleCaptures {
            let payloads = try Self.texts(path)
            total += payloads.count
            Self.compareBothWays(payloads)
            Self.compareBothWays(payloads, prefix: "bird")
        }
        #expect(total > 500)  // (570 when written)
    }

    @Test func namesSeenBeforeThePrefixIsLearnedAreClassifiedAgainAfterIt() {
        let messages = [
            #"{"event":"bird:ping","data":{}}"#,  // reveals "bird"
            #"{"event":"pusher:ping","data":{}}"#,
            #"{"event":"bird:subscribe","data":{"channel":"a"}}"#,
        ]
        // A decoder without a prefix that first sees names it cannot place, then learns it.
        let unplaced = [#"{"event":"bird:custom","channel":"c"}"#, #"{"event":"client-x","channel":"c"}"#]
        let payloads = (unplaced + messages + unplaced + messages).map { Array($0.utf8) }
        Self.compareBothWays(payloads)
        var decoder = BirdDecoder()
        _ = decoder.decode(Array(unplaced[0].utf8))
        #expect(decoder.prefix == nil)
        _ = decoder.decode(Array(messages[0].utf8))
        #expect(decoder.prefix == "bird")
        #expect(decoder.decode(Array(messages[2].utf8))?.kind == .subscribe)
    }

    @Test func pastTheTablesLimitsEventsStayTheSame() {
        // More distinct names (256 kept) and channels (1024 kept) than the tables keep,
        // each seen twice, with escaped names and channels among them.
        var payloads: [[UInt8]] = []
        for round in 0..<2 {
            for n in 0..<1500 {
                payloads.append(Array(#"{"event":"app-event-\#(n % 400)","channel":"private-user-\#(n)","data":"{}"}"#.utf8))
                if n % 100 == 0 {
                    payloads.append(Array(#"{"event":"bird:\u0070ing","channel":"priv\u0061te-\#(n)"}"#.utf8))
                }
            }
            if round == 0 { payloads.append(Array(#"{"event":"bird:connection_established","data":"{}"}"#.utf8)) }
        }
        Self.compareBothWays(payloads)
        Self.compareBothWays(payloads, prefix: "pusher")
    }
}
