import Vocabulary

/// RFC 9112/9110 checks a forwarding proxy must make on a request before relaying it,
/// beyond what the head parser (which also reads pcaps, where nothing may be refused) does.
///
/// A request that fails one is answered 400 and never forwarded: a bare CR or a NUL inside a
/// header value, or a second `Host` line, is read one way by the proxy and possibly another by
/// the upstream (request smuggling, header injection). RFC 9110 5.5 lets a recipient either
/// reject CR, LF and NUL in a field value or replace them with spaces; a relay that records
/// what it forwards byte for byte rejects. RFC 9112 3.2: more than one `Host` line is a 400.
/// RFC 9112 6.1: a request with both `Content-Length` and `Transfer-Encoding` is framed two
/// ways; an intermediary must drop `Content-Length` or reject it, and this one rejects it,
/// as nginx does, so the recorded request is the one the upstream would have read.
extension HTTPRequestHead {
    /// Why this request must not be forwarded, or nil when it may be.
    public var forwardingViolation: String? {
        if let index = target.utf8.firstIndex(where: { $0 < 0x21 || $0 == 0x7F }) {
            let byte = target.utf8[index]
            return "control character \(Self.describe(byte)) in the request target"
        }
        var hosts = 0
        var contentLength = false, transferEncoding = false
        for field in headers {
            contentLength = contentLength || field.name.equalsIgnoringASCIICase("Content-Length")
            transferEncoding = transferEncoding || field.name.equalsIgnoringASCIICase("Transfer-Encoding")
            if let byte = field.value.utf8.first(where: { $0 == 0 || $0 == 13 || $0 == 10 }) {
                return "\(Self.describe(byte)) in the value of header \"\(DisplayUnsafe.escaped(field.name))\" (RFC 9110 5.5)"
            }
            if field.name.equalsIgnoringASCIICase("Host") {
                hosts += 1
                if hosts > 1 { return "more than one Host header (RFC 9112 3.2)" }
            }
        }
        if contentLength, transferEncoding { return "Content-Length with Transfer-Encoding (RFC 9112 6.1)" }
        return nil
    }

    static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0: "NUL"
        case 10: "bare LF"
        case 13: "bare CR"
        default: "byte 0x" + String(byte, radix: 16, uppercase: true)
        }
    }
}
