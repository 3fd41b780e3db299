import Vocabulary

/// A close frame's body: optional code and UTF-8 reason (RFC 6455 5.5.1, 7.4).
public struct ClosePayload: Sendable, Hashable {
    public var code: UInt16?
    public var reason: String
    public init(code: UInt16?, reason: String) { self.code = code; self.reason = reason }

    /// Strict parse: a 1-byte body, a code that may not be sent, or a non-UTF-8 reason throw.
    public static func parse(_ payload: [UInt8]) throws(WebSocketError) -> ClosePayload {
        if payload.isEmpty { return ClosePayload(code: nil, reason: "") }
        guard payload.count >= 2 else {
            throw WebSocketError(.invalidClosePayload,
                                 "close payload of 1 byte (a close body is empty or starts with a 2-byte code)",
                                 closeCode: .protocolError)
        }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard CloseCode(code).isSendable else {
            throw WebSocketError(.invalidCloseCode,
                                 "close code \(code) may not be sent (allowed: 1000-1003, 1007-1014, 3000-4999)",
                                 closeCode: .protocolError)
        }
        let reasonBytes = payload[2...]
        var validator = UTF8Validator()
        guard validator.feed(reasonBytes), validator.isComplete else {
            throw WebSocketError(.invalidUTF8, "close reason is not valid UTF-8", closeCode: .invalidPayload)
        }
        return ClosePayload(code: code, reason: String(decoding: reasonBytes, as: UTF8.self))
    }

    /// Lenient parse for recording what a peer sent: never throws, keeps whatever it can.
    /// A 1-byte body gives no code; an invalid reason is decoded with replacement characters.
    public static func lenient(_ payload: [UInt8]) -> ClosePayload {
        guard payload.count >= 2 else { return ClosePayload(code: nil, reason: "") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        return ClosePayload(code: code, reason: String(decoding: payload[2...], as: UTF8.self))
    }

    public var encoded: [UInt8] {
        guard let code else { return [] }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }
}
