import Testing
@testable import Pcap

@Suite struct FrameBoundaryFinderTests {
    /// An unmasked server text frame with a short payload.
    static func serverFrame(_ text: String) -> [UInt8] { [0x81, UInt8(text.utf8.count)] + Array(text.utf8) }
    /// A masked client text frame (key 0, so the payload reads as is).
    static func clientFrame(_ text: String) -> [UInt8] { [0x81, 0x80 | UInt8(text.utf8.count), 0, 0, 0, 0] + Array(text.utf8) }

    static func find(_ bytes: [UInt8], ends: [Int], masked: Bool = false, minFrames: Int = 1) -> FrameBoundaryFinder.Result {
        let finder = FrameBoundaryFinder(masked: masked, rsv1Allowed: false, maxPayload: 1 << 20, minFrames: minFrames)
        return bytes.withUnsafeBytes { finder.find(in: $0, segmentEnds: ends) }
    }

    @Test func findsTheFrameAfterTheTailOfALostOne() {
        // The tail of a frame whose header was lost, then two whole frames ending a segment.
        let tail: [UInt8] = Array("xx\"}}".utf8)
        let bytes = tail + Self.serverFrame("{\"event\":\"a\"}") + Self.serverFrame("{}")
        #expect(Self.find(bytes, ends: [bytes.count]) == .found(tail.count))
    }

    @Test func requiresTheChainToEndOnASegmentBoundary() {
        let frame = Self.serverFrame("hello")
        // The frame ends at byte 7 but the segment goes on with 3 bytes that are no frame.
        let bytes = frame + [0xFF, 0xFF, 0xFF]
        #expect(Self.find(bytes, ends: [bytes.count]) == .needMore(discardable: bytes.count - 1))
        #expect(Self.find(frame, ends: [frame.count]) == .found(0))
    }

    @Test func maskingTellsTheDirection() {
        let client = Self.clientFrame("hi")
        #expect(Self.find(client, ends: [client.count], masked: true) == .found(0))
        if case .found(0) = Self.find(client, ends: [client.count], masked: false) {
            Issue.record("a masked frame was taken as a server frame")
        }
    }

    @Test func waitsForAnUnfinishedCandidate() {
        let frame = Self.serverFrame("a longer payload")
        let part = Array(frame[..<8])
        #expect(Self.find(part, ends: [part.count]) == .needMore(discardable: 0))
    }

    @Test func midStreamDetectionWantsTwoFrames() {
        let one = Self.serverFrame("x")
        if case .found = Self.find(one, ends: [one.count], minFrames: 2) { Issue.record("one frame was enough") }
        let two = one + Self.serverFrame("y")
        #expect(Self.find(two, ends: [one.count, two.count], minFrames: 2) == .found(0))
    }

    @Test func rejectsImplausibleHeaders() {
        let finder = FrameBoundaryFinder(masked: false, rsv1Allowed: false, maxPayload: 1 << 20, minFrames: 1)
        let cases: [[UInt8]] = [
            [0x83, 0x00],              // reserved opcode
            [0xC1, 0x00],              // rsv1 without deflate
            [0x09, 0x00],              // ping without FIN
            [0x89, 0x7E, 0x00, 0x80],  // control frame over 125
            [0x81, 0x7E, 0x00, 0x10],  // 16 bytes in the 2-byte form: not minimal
            [0x88, 0x01, 0x03],        // close with a 1-byte body
        ]
        for bytes in cases {
            let length = bytes.withUnsafeBytes { finder.frameLength(in: $0, at: 0) }
            #expect(length == nil, "\(bytes) was plausible")
        }
    }
}
