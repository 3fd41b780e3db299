import WebSocket

extension FuzzTarget {
    /// The first byte picks the limits and the negotiated extension; the rest arrives in
    /// pieces. Every frame goes through the validator and, in a compressed message, the
    /// inflater with a bounded output. The stream appended at once (whole frames take the
    /// decoder's one-step path) must give the same frames as the stream in pieces.
    static let frameDecoder = FuzzTarget(
        name: "frame-decoder",
        summary: "FrameDecoder (incremental and one-step) + MessageValidator + MessageInflater") { input in
        guard let flags = input.first else { return }
        let stream = UnsafeRawBufferPointer(rebasing: input[1...])
        let maxPayload = flags & 1 == 0 ? 1 << 16 : 125
        let deflate = flags & 2 != 0
        var decoder = FrameDecoder(maxPayload: maxPayload)
        var validator = MessageValidator(rsv1Allowed: deflate, expectMasked: flags & 4 == 0 ? nil : flags & 8 != 0)
        let inflater = deflate ? MessageInflater(windowBits: 9 + Int(flags >> 4 & 7) % 7, noContextTakeover: flags & 0x80 != 0) : nil
        var atOnce = FrameDecoder(maxPayload: maxPayload)
        atOnce.append(stream)
        var oneStep: [Frame] = []
        while let frame = try? atOnce.next() { oneStep.append(frame) }
        var index = 0
        var message: [UInt8] = []
        var compressed = false
        var chunks = InputChunks(stream, seed: flags)
        while let chunk = chunks.next() {
            decoder.append(chunk)
            while true {
                let frame: Frame?
                do { frame = try decoder.next() } catch { return }
                guard let frame else { break }
                require(frame.payload.count <= maxPayload, "payload over the limit")
                require(index < oneStep.count && frame == oneStep[index], "one-step and incremental decoding disagree")
                index += 1
                _ = validator.validate(frame)
                guard let inflater, !frame.opcode.isControl else { continue }
                if frame.opcode != .continuation {
                    compressed = frame.rsv1
                    message = []
                }
                guard compressed else { continue }
                message += frame.payload
                if message.count > 1 << 16 {
                    message = []
                    compressed = false
                } else if frame.fin {
                    if let out = try? inflater.inflate(message, maxOutput: 1 << 16) {
                        require(out.count <= 1 << 16, "inflated past maxOutput")
                    }
                    message = []
                }
            }
        }
    }
}
