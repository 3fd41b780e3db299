import WebSocket

/// Loop detection as HTTP intermediaries do it (RFC 9110 7.6.3): each one appends
/// `Via: 1.1 NAME` to the requests it forwards, so a request that comes back carrying its
/// own NAME has gone round a loop (an upstream that is this proxy under another name, or
/// a chain of proxies leading back to it). The pseudonym is unique per process, so two
/// Faultline proxies chained on purpose do not take each other for themselves.
enum ViaHeader {
    static func field(_ pseudonym: String) -> HeaderField { HeaderField("Via", "1.1 " + pseudonym) }

    /// Whether one of `headers`' Via entries (`received-protocol received-by [comment]`,
    /// comma-separated, in any number of Via lines) is received by `pseudonym`.
    static func names(_ pseudonym: String, in headers: [HeaderField]) -> Bool {
        headers.contains { field in
            guard field.name.equalsIgnoringASCIICase("Via") else { return false }
            return field.value.split(separator: ",").contains { entry in
                let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" })
                return words.count >= 2 && words[1].equalsIgnoringASCIICase(pseudonym)
            }
        }
    }
}
