import Testing
import Vocabulary
@testable import WebSocket

/// The one-step path (`FrameDecoder.wholeFrame(at:)`, and the decoder's own use of it) must
/// give exactly the frames of the state machine, and decline what only the state machine
/// can judge.
@Suite struct WholeFrameTests {
    /// Frames of every length encoding, masked and not, with every header bit pattern.
    static func sampleFrames() -> [Frame] {
        var generator = SeededGenerator(seed: 11)
        var frames: [Frame] = []
        for length in [0, 1, 125, 126, 127, 200, 65_535, 65_536, 70_000] {
            for masked in [false, true] {
                let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let key = masked ? MaskingKey.random(using: &generator) : nil
                frames.append(Frame(fin: length % 2 == 0, rsv1: length == 126, rsv2: masked && length == 1,
                                    rsv3: length == 200, opcode: Opcode(rawValue: UInt8(length % 16)),
                                    maskingKey: key, payload: payload))
            }
        }
        return frames
    }

    /// The state machine's answer: a fresh decoder fed everything, frames until nil.
    static func stateMachineFrames(_ bytes: [UInt8], maxPayload: Int = FrameDecoder.defaultMaxPayload) -> [Frame] {
        var decoder = FrameDecoder(maxPayload: maxPayload)
        decoder.append(bytes)
        var frames: [Frame] = []
        while let frame = try? decoder.next() { frames.append(frame) }
        return frames
    }

    @Test func takesWhatTheStateMachineReturnsAndDeclinesTheRest() {
        for frame in Self.sampleFrames() {
            let bytes = FrameEncoder.encode(frame)
            let whole = bytes.withUnsafeBufferPointer { FrameDecoder.wholeFrame(at: $0, maxPayload: FrameDecoder.defaultMaxPayload) }
            if frame.payload.count < 65_536 {
                #expect(whole?.0 == frame, "length \(frame.payload.count)")
                #expect(whole?.consumed == bytes.count)
                #expect(Self.stateMachineFrames(bytes) == [frame])
            } else {
                #expect(whole == nil, "64-bit lengths take the state machine")
            }
            // Every cut short of the whole frame is declined.
            for cut in [0, 1, 2, 3, bytes.count / 2, bytes.count - 1] where cut < bytes.count {
                let partial = Array(bytes[..<cut])
                #expect(partial.withUnsafeBufferPointer { FrameDecoder.wholeFrame(at: $0, maxPayload: 1 << 20) } == nil)
            }
        }
    }

    @Test func declinesNonMinimalAndOversizedLengths() {
        // 5 bytes sent with the 16-bit length: legal to relay, flagged by the state machine.
        let nonMinimal: [UInt8] = [0x81, 126, 0, 5] + Array("hello".utf8)
        #expect(nonMinimal.withUnsafeBufferPointer { FrameDecoder.wholeFrame(at: $0, maxPayload: 1 << 20) } == nil)
        var decoder = FrameDecoder()
        decoder.append(nonMinimal)
        let frame = try? decoder.next()
        #expect(frame?.payload == Array("hello".utf8))
        #expect(decoder.lastFrameHadNonMinimalLength)
        // Over the limit: declined here, an error from the state machine.
        let big = FrameEncoder.encode(Frame(opcode: .binary, payload: [UInt8](repeating: 7, count: 300)))
        #expect(big.withUnsafeBufferPointer { FrameDecoder.wholeFrame(at: $0, maxPayload: 100) } == nil)
        var limited = FrameDecoder(maxPayload: 100)
        limited.append(big)
        #expect(throws: WebSocketError.self) { try limited.next() }
    }

    /// A stream of many frames cut at every byte: the decoder (which uses the one-step path
    /// whenever a whole frame is buffered) returns the same frames whatever the cuts.
    @Test func anySplitGivesTheSameFrames() throws {
        let frames = Array(Self.sampleFrames().prefix(12))
        let stream = frames.flatMap { FrameEncoder.encode($0) }
        for step in [1, 3, 7, 64, 1000] {
            var decoder = FrameDecoder()
            var decoded: [Frame] = []
            var start = 0
            while start < stream.count {
                let end = min(stream.count, start + step)
                decoder.append(stream[start..<end])
                while let frame = try decoder.next() { decoded.append(frame) }
                start = end
            }
            #expect(decoded == frames, "step \(step)")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    /// Frames cut in one step wait in order, the first in its own slot and the rest in an
    /// array: reads of one or several whole frames, appended before or between `next()`
    /// calls, come out in wire order with `bufferedByteCount` counting exactly what waits.
    @Test func framesCutInOneStepComeOutInWireOrder() throws {
        let frames = (0..<7).map { Frame.text("frame \($0)", maskingKey: $0 % 2 == 0 ? MaskingKey(1, 2, 3, 4) : nil) }
        let sizes = frames.map { FrameEncoder.encode($0).count }
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        var waiting = 0
        func append(_ range: Range<Int>) {
            decoder.append(range.flatMap { FrameEncoder.encode(frames[$0]) })
            waiting += range.reduce(0) { $0 + sizes[$1] }
            #expect(decoder.bufferedByteCount == waiting)
        }
        func take(_ count: Int) throws {
            for _ in 0..<count {
                let frame = try #require(try decoder.next())
                waiting -= sizes[decoded.count]
                decoded.append(frame)
                #expect(decoder.bufferedByteCount == waiting)
            }
        }
        append(0..<2)        // two in one read: the first in the slot, the second in the array
        append(2..<3)        // another read before any is taken: behind both
        try take(1)
        append(3..<4)        // the slot is free but frames wait in the array: this one goes behind them
        try take(3)
        append(4..<5)        // nothing waits: the slot again
        try take(1)
        append(5..<7)
        try take(2)
        #expect(try decoder.next() == nil)
        #expect(decoded == frames)
        #expect(decoder.bufferedByteCount == 0)
    }
}
