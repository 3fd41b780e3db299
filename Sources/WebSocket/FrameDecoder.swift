/// Incremental frame parser: bytes in any split, frames out. Structural only (a frame it
/// returns may still break message rules; `MessageValidator` judges that), so a transparent
/// relay can carry what a strict peer would reject. Throws only for what cannot be parsed
/// or buffered at all (payload over `maxPayload`, 64-bit length with the top bit set).
///
/// Headers are read by `FrameHeader.parse`, the one header parser. Two paths give the
/// same frames, and callers see only `append` and `next()`:
/// - one step: when the decoder holds nothing, `append` cuts the whole frames at the start
///   of the bytes it is given straight out of them (one copy of each payload, unmasked in
///   place) and queues them for `next()`; only the rest goes into the buffer;
/// - incremental: the buffer, with a read index, is parsed frame by frame; a payload whose
///   bytes are still coming is copied in bulk into the frame being built as they arrive
///   (straight from `append`'s input once the buffer is drained). The buffer is compacted
///   only when its consumed prefix is large, not on every frame.
public struct FrameDecoder: Sendable {
    public static let defaultMaxPayload = 64 << 20

    /// Where the parser is in the current frame.
    enum State: Sendable {
        /// Between frames: the next buffered byte starts a header.
        case awaitingHeader
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
    /// Whether the last frame `next()` returned (or `beginPassThrough` began) used a longer
    /// length encoding than needed, whichever path cut it.
    public private(set) var lastFrameHadNonMinimalLength = false

    private var state: State = .awaitingHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Header facts of the frame whose payload is in progress.
    private var pendingHeaderBytes = 0
    private var pendingNonMinimal = false
    /// Frames cut in one step by `append`, in order, returned by `next()` before anything
    /// buffered: `firstReady`, then `ready` from `readyIndex`; `readyBytes` is their size on
    /// the wire. Most reads of a socket or TCP segment hold one frame: it waits in
    /// `firstReady`, which costs no array traffic (a uniqueness check on a cold header, a
    /// copy out and a destroy on the way back), the pcap reader's per-frame path.
    private var firstReady: Frame?
    private var ready: [Frame] = []
    private var readyIndex = 0
    private var readyBytes = 0

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
        if readIndex == buffer.count {
            switch progress {
            case .awaitingPayload(let remaining) where remaining > 0:
                // A large frame's payload goes straight into the frame being built,
                // skipping the buffer (one copy instead of two).
                guard var frame = takePendingFrame() else { break }
                let taken = min(remaining, rest.count)
                Self.appendPayload(UnsafeBufferPointer(rebasing: rest[..<taken]), to: &frame)
                state = .awaitingPayload(frame, remaining: remaining - taken)
                rest = UnsafeBufferPointer(rebasing: rest[taken...])
                if rest.isEmpty { return }
            case .awaitingHeader:
                // Nothing buffered: whole frames are cut straight from the input.
                while let (frame, consumed) = Self.wholeFrame(at: rest, maxPayload: maxPayload) {
                    if firstReady == nil, readyIndex == ready.count { firstReady = frame } else { ready.append(frame) }
                    readyBytes += consumed
                    rest = UnsafeBufferPointer(rebasing: rest[consumed...])
                }
                if rest.isEmpty { return }
            default:
                break
            }
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

    /// Where the parser is, without the frame in progress. `append` and `next` switch on
    /// this, not on `state`: a `switch` on `state` holds a copy of it (and so a second
    /// reference to the frame's payload) through the whole case, which made every append
    /// to a large payload copy all of it received so far. A 60 MB frame gathered whole for
    /// a fault rule took 27 s of copying and three times its size in memory.
    private enum Progress {
        case awaitingHeader
        case awaitingPayload(remaining: Int)
        case passingThrough
        case failed(WebSocketError)
    }

    private var progress: Progress {
        switch state {
        case .awaitingHeader: .awaitingHeader
        case .awaitingPayload(_, let remaining): .awaitingPayload(remaining: remaining)
        case .passingThrough: .passingThrough
        case .failed(let error): .failed(error)
        }
    }

    /// The frame in progress, taken out of the state (left `.awaitingHeader` until the
    /// caller puts it back), so that its payload has one owner and grows in place.
    private mutating func takePendingFrame() -> Frame? {
        guard case .awaitingPayload(let frame, _) = state else { return nil }
        state = .awaitingHeader
        return frame
    }

    /// The address of the payload storage of the frame in progress (tests: it must stay
    /// put while the payload arrives, that is, never be copied).
    var pendingPayloadAddress: UnsafeRawPointer? {
        guard case .awaitingPayload(let frame, _) = state else { return nil }
        return frame.payload.withUnsafeBytes { $0.baseAddress }
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
        let unread = buffer.count - readIndex + readyBytes
        switch state {
        case .awaitingHeader, .failed, .passingThrough:
            return unread
        case .awaitingPayload(let frame, _):
            return unread + pendingHeaderBytes + frame.payload.count
        }
    }

    // MARK: Pass-through of large frames

    /// The frame whose payload is arriving (its header complete), with its whole payload
    /// length; nil in any other state.
    public var pendingFrameLength: Int? {
        guard case .awaitingPayload(let frame, let remaining) = state else { return nil }
        return frame.payload.count + remaining
    }

    /// The opcode of the frame whose payload is arriving; nil in any other state.
    public var pendingOpcode: Opcode? {
        guard case .awaitingPayload(let frame, _) = state else { return nil }
        return frame.opcode
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
        lastFrameHadNonMinimalLength = pendingNonMinimal
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
        pendingHeaderBytes = 0
    }

    // MARK: Frames

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> Frame? {
        if let frame = firstReady.take() {
            readyBytes -= FrameEncoder.headerSize(of: frame) + frame.payload.count
            lastFrameHadNonMinimalLength = false
            return frame
        }
        if readyIndex < ready.count {
            return takeReady()
        }
        while true {
            switch progress {
            case .failed(let error):
                throw error

            case .passingThrough:
                // The payload is taken with `nextPassThroughBytes()`, not as a frame.
                return nil

            case .awaitingHeader:
                let start = readIndex
                guard let header = buffer.withUnsafeBytes({ FrameHeader.parse(UnsafeRawBufferPointer(rebasing: $0[start...])) })
                else { return nil }   // the header is not all there yet
                try check(header)
                let length = Int(header.payloadLength)
                if buffer.count - start - header.byteCount >= length {
                    // The whole frame is buffered: cut it out in one copy.
                    var frame = header.emptyFrame
                    let payloadStart = start + header.byteCount
                    buffer.withUnsafeBufferPointer {
                        Self.appendPayload(UnsafeBufferPointer(rebasing: $0[payloadStart ..< payloadStart + length]), to: &frame)
                    }
                    readIndex = payloadStart + length
                    lastFrameHadNonMinimalLength = header.hasNonMinimalLength
                    return frame
                }
                readIndex += header.byteCount
                pendingHeaderBytes = header.byteCount
                pendingNonMinimal = header.hasNonMinimalLength
                var frame = header.emptyFrame
                // Capacity is reserved only after the length passed the maxPayload check.
                frame.payload.reserveCapacity(length)
                state = .awaitingPayload(frame, remaining: length)

            case .awaitingPayload(let remaining):
                let available = buffer.count - readIndex
                if remaining > 0, available == 0 { return nil }
                guard var frame = takePendingFrame() else { return nil }
                if remaining > 0 {
                    let take = min(available, remaining)
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
                pendingHeaderBytes = 0
                lastFrameHadNonMinimalLength = pendingNonMinimal
                return frame
            }
        }
    }

    private mutating func takeReady() -> Frame {
        let frame = ready[readyIndex]
        readyIndex += 1
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: ready.capacity <= 64)
            readyIndex = 0
            readyBytes = 0
        } else {
            readyBytes -= FrameEncoder.headerSize(of: frame) + frame.payload.count
        }
        lastFrameHadNonMinimalLength = false
        return frame
    }

    /// Throws (and stays failed) for a header that cannot be decoded at all; the header's
    /// bytes stay unread, so `bufferedByteCount` then counts from where the bad frame began.
    private mutating func check(_ header: FrameHeader) throws(WebSocketError) {
        let length = header.payloadLength
        if length & (1 << 63) != 0 {
            try fail(WebSocketError(.lengthOverflow, "64-bit payload length has its most significant bit set",
                                    closeCode: .protocolError))
        }
        if header.hasNonMinimalLength, rejectsNonMinimalLength {
            let bytes = header.byteCount - (header.maskingKey == nil ? 2 : 6)
            try fail(WebSocketError(.nonMinimalLength, "payload length \(length) sent in \(bytes) extended bytes (not minimal)",
                                    closeCode: .protocolError))
        }
        guard length <= UInt64(maxPayload) else {
            try fail(WebSocketError(.payloadTooLarge, "frame payload of \(length) bytes exceeds the limit of \(maxPayload)",
                                    closeCode: .messageTooBig))
        }
    }

    /// The frame at the start of `bytes` if it is whole there and takes the common path
    /// (minimal 7- or 16-bit length, at most `maxPayload`), with the bytes it took; nil
    /// otherwise (the state machine then produces the same frame, or the error).
    @inline(__always)
    static func wholeFrame(at bytes: UnsafeBufferPointer<UInt8>, maxPayload: Int) -> (Frame, consumed: Int)? {
        guard let header = FrameHeader.parse(UnsafeRawBufferPointer(bytes)),
              header.payloadLength <= 0xFFFF, !header.hasNonMinimalLength else { return nil }
        let length = Int(header.payloadLength)
        let end = header.byteCount + length
        guard length <= maxPayload, bytes.count >= end else { return nil }
        var frame = header.emptyFrame
        frame.payload = Array(UnsafeBufferPointer(rebasing: bytes[header.byteCount ..< end]))
        if let key = header.maskingKey {
            frame.payload.withUnsafeMutableBytes { applyMask(key, to: $0, offset: 0) }
        }
        return (frame, end)
    }

    private mutating func fail(_ error: WebSocketError) throws(WebSocketError) -> Never {
        state = .failed(error)
        throw error
    }
}
