/// A close status code (RFC 6455 7.4), with names for the ones Faultline reasons about
/// and `.other` for everything else, so every 16-bit value can be represented.
public enum CloseCode: Hashable, Sendable, CustomStringConvertible {
    case normalClosure          // 1000
    case goingAway              // 1001
    case protocolError          // 1002
    case unsupportedData        // 1003
    case noStatusReceived       // 1005, never sent on the wire
    case abnormalClosure        // 1006, never sent on the wire
    case invalidPayload         // 1007
    case policyViolation        // 1008
    case messageTooBig          // 1009
    case mandatoryExtension     // 1010
    case internalError          // 1011
    case tlsHandshake           // 1015, never sent on the wire
    case other(UInt16)

    public init(_ code: UInt16) {
        switch code {
        case 1000: self = .normalClosure
        case 1001: self = .goingAway
        case 1002: self = .protocolError
        case 1003: self = .unsupportedData
        case 1005: self = .noStatusReceived
        case 1006: self = .abnormalClosure
        case 1007: self = .invalidPayload
        case 1008: self = .policyViolation
        case 1009: self = .messageTooBig
        case 1010: self = .mandatoryExtension
        case 1011: self = .internalError
        case 1015: self = .tlsHandshake
        default: self = .other(code)
        }
    }

    public var rawValue: UInt16 {
        switch self {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unsupportedData: 1003
        case .noStatusReceived: 1005
        case .abnormalClosure: 1006
        case .invalidPayload: 1007
        case .policyViolation: 1008
        case .messageTooBig: 1009
        case .mandatoryExtension: 1010
        case .internalError: 1011
        case .tlsHandshake: 1015
        case .other(let code): code
        }
    }

    /// Whether an endpoint may put this code in a close frame (RFC 6455 7.4.1, 7.4.2):
    /// 1000-1003, 1007-1011 (plus the IANA-registered 1012-1014), and 3000-4999.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}
