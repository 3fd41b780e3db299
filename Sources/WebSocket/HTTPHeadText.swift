/// What an HTTP/1.1 head may carry: no control character anywhere (RFC 9110 5.5 allows
/// only HTAB among them, in field values and the reason phrase; RFC 9112 3.2 allows none
/// in a request target). The one head writer (`serialized`) goes through here, so no caller
/// can split a head with a CR LF taken from a capture or a peer.
public enum HTTPHeadText {
    /// The first byte of `text` no head may carry there, and its offset in the UTF-8 bytes:
    /// C0 controls and DEL; HTAB only when `allowingTab` is false.
    public static func firstControl(in text: String, allowingTab: Bool) -> (offset: Int, byte: UInt8)? {
        for (offset, byte) in text.utf8.enumerated() where isForbidden(byte, allowingTab: allowingTab) {
            return (offset, byte)
        }
        return nil
    }

    /// A byte's name for messages: "CR (0x0D)", "0x1B".
    public static func describe(_ byte: UInt8) -> String {
        let hex = "0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        switch byte {
        case 9: return "HTAB (\(hex))"
        case 10: return "LF (\(hex))"
        case 13: return "CR (\(hex))"
        case 0: return "NUL (\(hex))"
        case 127: return "DEL (\(hex))"
        default: return hex
        }
    }

    static func isForbidden(_ byte: UInt8, allowingTab: Bool) -> Bool {
        (byte < 32 && !(allowingTab && byte == 9)) || byte == 127
    }

    /// A reason phrase, header name or value as the writer emits it: each forbidden byte
    /// becomes a space, so the text stays on its line.
    static func appendField(_ text: String, allowingTab: Bool, to out: inout [UInt8]) {
        for byte in text.utf8 { out.append(isForbidden(byte, allowingTab: allowingTab) ? 32 : byte) }
    }

    /// A request target as the writer emits it: controls and spaces percent-encoded, as a
    /// URL carries them, so the request line keeps its three parts.
    static func appendTarget(_ target: String, to out: inout [UInt8]) {
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in target.utf8 {
            if isForbidden(byte, allowingTab: false) || byte == 32 {
                out.append(contentsOf: [37, digits[Int(byte >> 4)], digits[Int(byte & 15)]])
            } else {
                out.append(byte)
            }
        }
    }
}
