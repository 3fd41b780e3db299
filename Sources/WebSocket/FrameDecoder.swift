/// Incremental frame parser: bytes in any split, frames out. Structural only (a frame it
/// returns may still break message rules; `MessageValidator` judges that), so a transparent
/// relay can carry what a strict peer would reject. Throws only for what cannot be parsed
/// or buffered at all (payload over `maxPayload`, 64-bit length with the top bit set).
///
/// Bytes go into one buffer with a read index; each state consumes exactly the bytes it
/// needs and moves on, so no byte is looked at twice. Payload bytes are copied in bulk into
/// the frame being built and unmasked as they arrive; the buffer is compacted only when
/// the consumed prefix is large, not on every frame.
public struct FrameDecoder: Sendable {
    public static let defaultMaxPayload = 64 << 20

    /// The first two header bytes, decoded.
    struct Header: Sendable {
        var fin: Bool
        var rsv1: Bool
        var rsv2: Bool
        var rsv3: Bool
        var opcode: Opcode
        var masked: Bool
        /// The 7-bit length field: the length itself, or 126/127 for an extended length.
        var shortLength: UInt8
    }

    /// Where the parser is in the current frame.
    enum State: Sendable {
        case awaitingHeader
        /// Waiting for the 2 (`shortLength` 126) or 8 (127) extended length bytes.
        case awaitingExtendedLength(Header, byteCount: Int)
        case awaitingMask(Header, length: Int)
        /// Copying payload; `frame.payload` holds what arrived so far, already unmasked.
        case awaitingPayload(Frame, remaining: Int)
        /// Passing a large frame's payload through as it arrives (`beginPassThrough`):
        /// `offset` payload bytes were handed out, `remaining` are still to come.
        case passingThrough(key: MaskingKey?, offset: Int, remaining: Int)
        /// A fatal error was thrown; every later call throws it again.
        case failed(WebSocketError)
    }

    public let maxPayload: Int
    /// RFC 6455 5.2 requires the minimal length encoding. Off by default so a transparent
    /// relay can carry (and record) a frame that breaks it; on, such a frame throws
    /// `nonMinimalLength`.
    public var rejectsNonMinimalLength = false
    /// Whether the last frame `next()` returned used a longer length encoding than needed.
    public private(set) var lastFrameHadNonMinimalLength = false

    private var state: State = .awaitingHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var nonMinimal = false
    /// Header bytes of the frame in progress already consumed, for `bufferedByteCount`.
    private var headerBytesConsumed = 0

    public init(maxPayload: Int = FrameDecoder.defaultMaxPayload) {
        self.maxPayload = maxPayload
    }

    /// Hands the decoder more bytes; they are consumed by `next()`.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        // Everything funnels into one contiguous-buffer path: a generic element-by-element
        // copy (what a `Slice` of a raw buffer would get) cost more than the parsing itself.
        if bytes.withContiguousStorageIfAvailable({ append(buffer: $0) }) != nil { return }
        Array(bytes).withUnsafeBufferPointer { append(buffer: $0) }
    }

    /// Hands the decoder bytes from a raw buffer (a packet, a socket read), copied at once.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        bytes.withMemoryRebound(to: UInt8.self) { append(buffer: $0) }
    }

    private mutating func append(buffer bytes: UnsafeBufferPointer<UInt8>) {
        var rest = bytes
        if readIndex == buffer.count, case .awaitingPayload(var frame, let remaining) = state, remaining > 0 {
            // Fast path for large frames: payload bytes go straight into the frame being
            // built, skipping the buffer (one copy instead of two).
            state = .awaitingHeader  // drop the state's reference so the append does not copy
            let taken = min(remaining, rest.count)
            Self.appendPayload(UnsafeBufferPointer(rebasing: rest[..<taken]), to: &frame)
            state = .awaitingPayload(frame, remaining: remaining - taken)
            rest = UnsafeBufferPointer(rebasing: rest[taken...])
            if rest.isEmpty { return }
        }
        if readIndex == buffer.count {
            // Everything consumed: start over, keeping the storage unless one huge read
            // grew it (an idle connection should not hold megabytes).
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            readIndex = 0
        } else if readIndex >= 64 * 1024 && readIndex * 2 >= buffer.count {
            // Compact: drop the consumed prefix once it outweighs what is left.
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: rest)
    }

    /// Appends `chunk` to the frame's payload and unmasks just those bytes.
    private static func appendPayload(_ chunk: UnsafeBufferPointer<UInt8>, to frame: inout Frame) {
        let offset = frame.payload.count
        frame.payload.append(contentsOf: chunk)
        if let key = frame.maskingKey {
            frame.payload.withUnsafeMutableBytes { raw in
                applyMask(key, to: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]), offset: offset)
            }
        }
    }

    /// Bytes received but not yet part of a returned frame.
    public var bufferedByteCount: Int {
        let unread = buffer.count - readIndex
        switch state {
        case .awaitingHeader, .failed:
            return unread
        case .awaitingExtendedLength, .awaitingMask:
            return unread + headerBytesConsumed
        case .awaitingPayload(let frame, _):
            return unread + headerBytesConsumed + frame.payload.count
        case .passingThrough:
            return unread
        }
    }

    // MARK: Pass-through of large frames

    /// The frame whose payload is arriving (its header complete), with its whole payload
    /// length; nil in any other state.
    public var pendingFrameLength: Int? {
        guard case .awaitingPayload(let frame, let remaining) = state else { return nil }
        return frame.payload.count + remaining
    }

    /// Whether a frame's payload is being passed through (`nextPassThroughBytes`).
    public var isPassingThrough: Bool {
        if case .passingThrough = state { return true }
        return false
    }

    /// Stops gathering the pending frame: returns it with the payload received so far
    /// (unmasked) and how many payload bytes are still to come; those are then handed out
    /// by `nextPassThroughBytes()` as they arrive instead of being buffered whole. So a
    /// relay holds a bounded amount of a large frame, however large. Nil without a pending
    /// frame.
    public mutating func beginPassThrough() -> (frame: Frame, remaining: Int)? {
        guard case .awaitingPayload(let frame, let remaining) = state else { return nil }
        state = .passingThrough(key: frame.maskingKey, offset: frame.payload.count, remaining: remaining)
        lastFrameHadNonMinimalLength = nonMinimal
        if remaining == 0 { endPassThrough() }
        return (frame, remaining)
    }

    /// The next payload bytes of the frame being passed through, unmasked (nil when none are
    /// buffered). After the last one the decoder is back at a frame boundary.
    public mutating func nextPassThroughBytes() -> [UInt8]? {
        guard case .passingThrough(let key, let offset, let remaining) = state else { return nil }
        let take = min(remaining, buffer.count - readIndex)
        guard take > 0 else { return nil }
        var chunk = Array(buffer[readIndex ..< readIndex + take])
        if let key { applyMask(key, to: &chunk, offset: offset) }
        readIndex += take
        if take == remaining {
            endPassThrough()
        } else {
            state = .passingThrough(key: key, offset: offset + take, remaining: remaining - take)
        }
        return chunk
    }

    private mutating func endPassThrough() {
        state = .awaitingHeader
        headerBytesConsumed = 0
    }

    /// After a failure, the header bytes of the failed frame that were read (not part of
    /// `bufferedByteCount`): with it a reader can say where the bad frame began.
    public var failedHeaderByteCount: Int {
        if case .failed = state { return headerBytesConsumed }
        return 0
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> Frame? {
        while true {
            switch state {
            case .failed(let error):
                throw error

            case .passingThrough:
                // The payload is taken with `nextPassThroughBytes()`, not as a frame.
                return nil

            case .awaitingHeader:
                guard buffer.count - readIndex >= 2 else { return nil }
                if let (frame, consumed) = wholeBufferedFrame() {
                    readIndex += consumed
                    headerBytesConsumed = 0
                    lastFrameHadNonMinimalLength = false
                    return frame
                }
                let first = buffer[readIndex]
                let second = buffer[readIndex + 1]
                readIndex += 2
                headerBytesConsumed = 2
                let header = Header(fin: first & 0x80 != 0, rsv1: first & 0x40 != 0,
                                    rsv2: first & 0x20 != 0, rsv3: first & 0x10 != 0,
                                    opcode: Opcode(rawValue: first & 0x0F),
                                    masked: second & 0x80 != 0, shortLength: second & 0x7F)
                nonMinimal = false
                switch header.shortLength {
                case 126: state = .awaitingExtendedLength(header, byteCount: 2)
                case 127: state = .awaitingExtendedLength(header, byteCount: 8)
                default: try lengthKnown(header, length: Int(header.shortLength))
                }

            case .awaitingExtendedLength(let header, let byteCount):
                guard buffer.count - readIndex >= byteCount else { return nil }
                var value: UInt64 = 0
                for i in 0..<byteCount { value = value << 8 | UInt64(buffer[readIndex + i]) }
                readIndex += byteCount
                headerBytesConsumed += byteCount
                if value & (1 << 63) != 0 {
                    try fail(WebSocketError(.lengthOverflow,
                                            "64-bit payload length has its most significant bit set",
                                            closeCode: .protocolError))
                }
                let minimal = byteCount == 2 ? value > 125 : value > 0xFFFF
                if !minimal {
                    nonMinimal = true
                    if rejectsNonMinimalLength {
                        try fail(WebSocketError(.nonMinimalLength,
                                                "payload length \(value) sent in \(byteCount) extended bytes (not minimal)",
                                                closeCode: .protocolError))
                    }
                }
                guard value <= UInt64(maxPayload) else {
                    try fail(tooLarge(value))
                }
                try lengthKnown(header, length: Int(value))

            case .awaitingMask(let header, let length):
                guard buffer.count - readIndex >= 4 else { return nil }
                let key = MaskingKey(buffer[readIndex], buffer[readIndex + 1],
                                     buffer[readIndex + 2], buffer[readIndex + 3])
                readIndex += 4
                headerBytesConsumed += 4
                startPayload(header, key: key, length: length)

            case .awaitingPayload(var frame, let remaining):
                let available = buffer.count - readIndex
                if remaining > 0 {
                    guard available > 0 else { return nil }
                    let take = min(available, remaining)
                    // Release the state's copy so the append below does not copy the payload.
                    state = .awaitingHeader
                    let start = readIndex
                    buffer.withUnsafeBufferPointer {
                        Self.appendPayload(UnsafeBufferPointer(rebasing: $0[start ..< start + take]), to: &frame)
                    }
                    readIndex += take
                    if take < remaining {
                        state = .awaitingPayload(frame, remaining: remaining - take)
                        return nil
                    }
                }
                state = .awaitingHeader
                headerBytesConsumed = 0
                lastFrameHadNonMinimalLength = nonMinimal
                return frame
            }
        }
    }

    /// The common case in one step: a frame whose header and payload are all buffered, with
    /// a 7- or 16-bit minimal length within `maxPayload`, is cut straight out of the buffer
    /// (one allocation, one copy, unmasked in place) without passing through the states.
    /// Anything else (64-bit or non-minimal lengths, oversized or partial frames) returns
    /// nil and takes the state machine, which produces the same frame or the error.
    private func wholeBufferedFrame() -> (Frame, consumed: Int)? {
        let start = readIndex
        return buffer.withUnsafeBufferPointer { bytes in
            Self.wholeFrame(at: UnsafeBufferPointer(rebasing: bytes[start...]), maxPayload: maxPayload)
        }
    }

    /// Whether the decoder holds no bytes at all: everything appended so far was returned as
    /// whole frames, so the next byte appended starts a frame.
    public var isAtFrameBoundary: Bool {
        guard readIndex == buffer.count else { return false }
        if case .awaitingHeader = state { return true }
        return false
    }

    /// The frame at the start of `bytes` if it is whole there and takes the common path
    /// (minimal 7- or 16-bit length, at most `maxPayload`), with the bytes it took; nil
    /// otherwise. A reader whose decoder `isAtFrameBoundary` can take frames straight out of
    /// its input this way and `append` only the rest: the frames are exactly the ones
    /// `append` then `next()` would return, without the copy through the decoder's buffer.
    public static func wholeFrame(at bytes: UnsafeBufferPointer<UInt8>, maxPayload: Int) -> (Frame, consumed: Int)? {
        let available = bytes.count
        guard available >= 2 else { return nil }
        let first = bytes[0], second = bytes[1]
        var headerLength = 2
        var length = Int(second & 0x7F)
        if length == 127 { return nil }
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            guard length > 125 else { return nil }
            headerLength = 4
        }
        let masked = second & 0x80 != 0
        if masked { headerLength += 4 }
        guard length <= maxPayload, available >= headerLength + length else { return nil }
        var payload = Array(UnsafeBufferPointer(rebasing: bytes[headerLength ..< headerLength + length]))
        var key: MaskingKey?
        if masked {
            let k = headerLength - 4
            let maskingKey = MaskingKey(bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3])
            payload.withUnsafeMutableBytes { applyMask(maskingKey, to: $0, offset: 0) }
            key = maskingKey
        }
        let frame = Frame(fin: first & 0x80 != 0, rsv1: first & 0x40 != 0, rsv2: first & 0x20 != 0,
                          rsv3: first & 0x10 != 0, opcode: Opcode(rawValue: first & 0x0F),
                          maskingKey: key, payload: payload)
        return (frame, headerLength + length)
    }

    private mutating func lengthKnown(_ header: Header, length: Int) throws(WebSocketError) {
        guard length <= maxPayload else { try fail(tooLarge(UInt64(length))) }
        if header.masked {
            state = .awaitingMask(header, length: length)
        } else {
            startPayload(header, key: nil, length: length)
        }
    }

    private mutating func startPayload(_ header: Header, key: MaskingKey?, length: Int) {
        var payload: [UInt8] = []
        // Capacity is reserved only after the length passed the maxPayload check.
        payload.reserveCapacity(length)
        let frame = Frame(fin: header.fin, rsv1: header.rsv1, rsv2: header.rsv2, rsv3: header.rsv3,
                          opcode: header.opcode, maskingKey: key, payload: payload)
        state = .awaitingPayload(frame, remaining: length)
    }

    private mutating func fail(_ error: WebSocketError) throws(WebSocketError) -> Never {
        state = .failed(error)
        throw error
    }

    private func tooLarge(_ length: UInt64) -> WebSocketError {
        WebSocketError(.payloadTooLarge, "frame payload of \(length) bytes exceeds the limit of \(maxPayload)",
                       closeCode: .messageTooBig)
    }
}
