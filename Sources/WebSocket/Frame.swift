/// One WebSocket frame as it travelled on the wire, with its payload unmasked.
/// The frame keeps every header bit so a transparent relay can reproduce it exactly.
public struct Frame: Hashable, Sendable {
    public var fin: Bool
    public var rsv1: Bool
    public var rsv2: Bool
    public var rsv3: Bool
    public var opcode: Opcode
    /// The masking key the sender used, or nil for an unmasked (server) frame.
    public var maskingKey: MaskingKey?
    /// Application data, already unmasked.
    public var payload: [UInt8]

    public init(fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
                opcode: Opcode, maskingKey: MaskingKey? = nil, payload: [UInt8] = []) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    public var isMasked: Bool { maskingKey != nil }

    /// A text frame holding `text` as UTF-8.
    public static func text(_ text: String, fin: Bool = true, maskingKey: MaskingKey? = nil) -> Frame {
        Frame(fin: fin, opcode: .text, maskingKey: maskingKey, payload: Array(text.utf8))
    }

    /// A close frame with a status code and reason (RFC 6455 5.5.1); no code gives an empty body.
    public static func close(code: UInt16?, reason: String = "", maskingKey: MaskingKey? = nil) -> Frame {
        var payload: [UInt8] = []
        if let code {
            payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
        }
        return Frame(opcode: .close, maskingKey: maskingKey, payload: payload)
    }
}

/// The 4-byte key a client masks its frames with (RFC 6455 5.3).
public struct MaskingKey: Hashable, Sendable {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) { bytes = (b0, b1, b2, b3) }

    public init?<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard bytes.count == 4 else { return nil }
        let a = Array(bytes)
        self.init(a[0], a[1], a[2], a[3])
    }

    /// A fresh key from a caller-owned generator, so tests and replays repeat exactly.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> MaskingKey {
        let value = UInt32.random(in: .min ... .max, using: &generator)
        return MaskingKey(UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
    }

    public var array: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3] }

    public static func == (lhs: MaskingKey, rhs: MaskingKey) -> Bool { lhs.array == rhs.array }
    public func hash(into hasher: inout Hasher) { hasher.combine(array) }
}
