/// A frame's 4-bit opcode. A struct rather than an enum so that all 16 values exist:
/// the transparent proxy must be able to carry (and record) reserved opcodes too.
public struct Opcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    public static let continuation = Opcode(rawValue: 0x0)
    public static let text = Opcode(rawValue: 0x1)
    public static let binary = Opcode(rawValue: 0x2)
    public static let close = Opcode(rawValue: 0x8)
    public static let ping = Opcode(rawValue: 0x9)
    public static let pong = Opcode(rawValue: 0xA)

    /// Control frames have the high bit of the opcode set (RFC 6455 5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }

    /// 0x3-0x7 and 0xB-0xF are reserved for future use (RFC 6455 5.2).
    public var isReserved: Bool { !(rawValue <= 0x2 || (0x8...0xA).contains(rawValue)) }

    public var name: String {
        switch rawValue {
        case 0x0: "continuation"
        case 0x1: "text"
        case 0x2: "binary"
        case 0x8: "close"
        case 0x9: "ping"
        case 0xA: "pong"
        default: "reserved-0x" + String(rawValue, radix: 16)
        }
    }

    public var description: String { name }
}
