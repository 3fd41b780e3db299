import Testing
import Vocabulary
@testable import WebSocket

/// A large frame's payload is gathered in place as its bytes arrive: one buffer, reserved
/// for the whole length once the header is read, never copied. Each append once copied
/// everything received so far (a `switch` on the decoder's state held a second reference
/// to the payload): quadratic, a 60 MB frame gathered for a fault rule took 27 s and three
/// times its size in the proxy.
@Suite struct LargePayloadTests {
    static func wire(length: Int, masked: Bool) -> [UInt8] {
        var generator = SeededGenerator(seed: 5)
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let key = masked ? MaskingKey.random(using: &generator) : nil
        return FrameEncoder.encode(Frame(opcode: .binary, maskingKey: key, payload: payload))
    }

    /// Feeds the frame in `chunk`-byte reads, asking for a frame after each (as the relay
    /// does), and checks where the payload lives after every read.
    @Test(arguments: [(masked: true, chunk: 4096), (masked: false, chunk: 65_536), (masked: true, chunk: 1)])
    func thePayloadIsNeverCopiedWhileItArrives(_ masked: Bool, _ chunk: Int) throws {
        let length = chunk == 1 ? 20_000 : 1 << 20
        let bytes = Self.wire(length: length, masked: masked)
        var decoder = FrameDecoder()
        var address: UnsafeRawPointer?
        var frames: [Frame] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            decoder.append(bytes[offset..<end])
            offset = end
            while let frame = try decoder.next() { frames.append(frame) }
            if let now = decoder.pendingPayloadAddress {
                if let address { #expect(now == address, "payload moved after \(offset) bytes") }
                address = now
            }
        }
        #expect(address != nil)
        #expect(frames.count == 1)
        #expect(frames.first?.payload == (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }
}
