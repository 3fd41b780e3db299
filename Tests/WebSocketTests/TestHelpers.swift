import Vocabulary
import WebSocket


/// How a byte stream is handed to a decoder.
enum Feeding: CaseIterable, CustomStringConvertible {
    case whole, byteByByte, randomSplits
    var description: String {
        switch self {
        case .whole: "whole"
        case .byteByByte: "byte by byte"
        case .randomSplits: "random splits"
        }
    }

    /// The pieces `bytes` is cut into.
    func pieces(of bytes: [UInt8], seed: UInt64 = 42) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole:
            return [bytes[...]]
        case .byteByByte:
            return bytes.indices.map { bytes[$0...$0] }
        case .randomSplits:
            var generator = SeededGenerator(seed: seed)
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count {
                let size = Int.random(in: 1...max(1, min(bytes.count - start, 9000)), using: &generator)
                pieces.append(bytes[start..<(start + size)])
                start += size
            }
            return pieces
        }
    }
}

/// Feeds `bytes` to a decoder in `feeding`'s pieces, collecting every frame.
func decodeAll(_ bytes: [UInt8], feeding: Feeding, decoder: inout FrameDecoder, seed: UInt64 = 42) throws -> [Frame] {
    var frames: [Frame] = []
    for piece in feeding.pieces(of: bytes, seed: seed) {
        decoder.append(piece)
        while let frame = try decoder.next() { frames.append(frame) }
    }
    return frames
}

func decodeAll(_ bytes: [UInt8], feeding: Feeding = .whole, maxPayload: Int = FrameDecoder.defaultMaxPayload) throws -> [Frame] {
    var decoder = FrameDecoder(maxPayload: maxPayload)
    return try decodeAll(bytes, feeding: feeding, decoder: &decoder)
}

/// Bytes of a given length with a recognisable pattern.
func patternBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    var out = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        let value = generator.next()
        for shift in stride(from: 0, to: 64, by: 8) where i < count {
            out[i] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            i += 1
        }
    }
    return out
}

func hex(_ string: String) -> [UInt8] {
    let digits = string.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        out.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return out
}
