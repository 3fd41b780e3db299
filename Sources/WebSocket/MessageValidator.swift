import Vocabulary

/// Judges frames against RFC 6455's message rules, one direction of one connection:
/// fragmentation and continuation order, control frames (<= 125 bytes, FIN set), RSV bits
/// without a negotiated extension, masking direction, close payloads, and UTF-8 of text
/// messages incrementally across fragments.
///
/// Kept apart from `FrameDecoder` so a transparent relay can forward a frame a strict peer
/// would reject and record why; `--strict` acts on the same verdict.
public struct MessageValidator: Sendable {
    /// Where the data message stream is.
    enum State: Sendable {
        case betweenMessages
        /// Inside a fragmented message begun by `opcode`; `compressed` if its first frame had
        /// RSV1 (permessage-deflate), whose payload is then not UTF-8 checked here.
        case inMessage(opcode: Opcode, compressed: Bool)
    }

    public let rsv1Allowed: Bool
    public let expectMasked: Bool?
    private var state: State = .betweenMessages
    private var utf8 = UTF8Validator()

    /// `rsv1Allowed`: permessage-deflate was negotiated. `expectMasked`: frames from a client.
    public init(rsv1Allowed: Bool = false, expectMasked: Bool? = nil) {
        self.rsv1Allowed = rsv1Allowed
        self.expectMasked = expectMasked
    }

    /// The first rule `frame` breaks, or nil. Updates the message state either way.
    public mutating func validate(_ frame: Frame) -> WebSocketError? {
        let opcode = frame.opcode
        if frame.rsv2 || frame.rsv3 {
            return protocolError(.reservedBitsSet,
                                 "\(opcode) frame has RSV\(frame.rsv2 ? 2 : 3) set without a negotiated extension")
        }
        if frame.rsv1 && !(rsv1Allowed && (opcode == .text || opcode == .binary)) {
            let why = rsv1Allowed ? "(permessage-deflate allows it only on a message's first frame)"
                                  : "without a negotiated extension"
            return protocolError(.reservedBitsSet, "\(opcode) frame has RSV1 set \(why)")
        }
        if opcode.isReserved {
            return protocolError(.reservedOpcode, "reserved opcode 0x\(String(opcode.rawValue, radix: 16))")
        }
        if let expectMasked, expectMasked != frame.isMasked {
            return expectMasked
                ? protocolError(.maskRequired, "unmasked \(opcode) frame from a client (clients must mask)")
                : protocolError(.maskNotAllowed, "masked \(opcode) frame from a server (servers must not mask)")
        }
        if opcode.isControl { return validateControl(frame) }
        return validateData(frame)
    }

    private func validateControl(_ frame: Frame) -> WebSocketError? {
        if !frame.fin {
            return protocolError(.fragmentedControlFrame, "\(frame.opcode) frame without FIN (control frames cannot be fragmented)")
        }
        if frame.payload.count > 125 {
            return protocolError(.controlFrameTooLong, "\(frame.opcode) frame of \(frame.payload.count) bytes (limit 125)")
        }
        if frame.opcode == .close {
            do throws(WebSocketError) {
                _ = try ClosePayload.parse(frame.payload)
            } catch {
                return error
            }
        }
        return nil
    }

    private mutating func validateData(_ frame: Frame) -> WebSocketError? {
        let opcode: Opcode
        let compressed: Bool
        switch (state, frame.opcode) {
        case (.betweenMessages, .continuation):
            return protocolError(.unexpectedContinuation, "continuation frame with no message in progress")
        case (.inMessage(let first, _), let next) where next != .continuation:
            state = .betweenMessages
            utf8.reset()
            return protocolError(.expectedContinuation,
                                 "\(next) frame while a fragmented \(first) message is unfinished (expected continuation)")
        case (.inMessage(let first, let wasCompressed), _):
            opcode = first
            compressed = wasCompressed
        case (.betweenMessages, let first):
            opcode = first
            compressed = frame.rsv1
        }
        if frame.fin {
            state = .betweenMessages
        } else {
            state = .inMessage(opcode: opcode, compressed: compressed)
        }
        guard opcode == .text, !compressed else { return nil }
        let valid = utf8.feed(frame.payload) && (!frame.fin || utf8.isComplete)
        if frame.fin || !valid { utf8.reset() }
        if !valid {
            if !frame.fin { state = .betweenMessages }
            return WebSocketError(.invalidUTF8, "text message is not valid UTF-8", closeCode: .invalidPayload)
        }
        return nil
    }

    private func protocolError(_ kind: WebSocketError.Kind, _ message: String) -> WebSocketError {
        WebSocketError(kind, message, closeCode: .protocolError)
    }
}
