/// `HOST:PORT` as written on command lines, in capture records and in URLs: an IPv4
/// address or a name, or an IPv6 address in brackets, then a port of decimal digits.
/// Every command-line address, URL authority and recorded address is read by `parse`.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `127.0.0.1:8080`, `[::1]:8080`, `localhost:0` (ports 0...65535; callers that
    /// connect refuse 0 themselves). With a `defaultPort`, text without a port
    /// (`example.com`, `[::1]`) takes that port; without one, it is an error.
    public static func parse(_ text: String, defaultPort: Int? = nil) -> Result<HostPort, HostPortError> {
        // Read by characters, a non-ASCII host could swallow the ':' after it (U+06DD
        // joins the character that follows it into one), and the address would print back
        // as one that reads differently (found by the proxy-request fuzz target). Hosts in
        // URLs and addresses are ASCII: a name in its xn-- form, an IPv4 or IPv6 address.
        if let bad = text.unicodeScalars.first(where: { !$0.isASCII || $0.value < 0x21 || $0.value == 0x7F }) {
            // The text is shown escaped: it may hold control characters.
            let shown = DisplayUnsafe.escaped(text)
            let code = String(bad.value, radix: 16, uppercase: true)
            return .failure(HostPortError("'\(shown)': U+\(code) is not allowed in an address: a host is ASCII without spaces (a name in its xn-- form, an IPv4 or [IPv6] address)"))
        }
        return parseASCII(text, defaultPort: defaultPort)
    }

    private static func parseASCII(_ text: String, defaultPort: Int?) -> Result<HostPort, HostPortError> {
        let host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                return .failure(HostPortError("'\(text)': an IPv6 address in brackets needs its ']', such as [::1]:8080"))
            }
            host = text[text.index(after: text.startIndex)..<close]
            guard host.isEmpty || isIPv6Literal(host) else {
                return .failure(HostPortError("'\(text)': '[\(host)]' is not an IPv6 address; brackets go around one only, such as [::1]:8080"))
            }
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    return .failure(HostPortError("'\(text)': expected ':PORT' after the bracketed address, such as [::1]:8080"))
                }
                portText = after.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                return .failure(HostPortError("'\(text)': put an IPv6 address in brackets, such as [::1]:8080"))
            }
        } else {
            host = Substring(text)
        }
        // A bracket anywhere else would print back as an address that reads differently.
        if !text.hasPrefix("["), host.contains(where: { $0 == "[" || $0 == "]" }) {
            return .failure(HostPortError("'\(text)': brackets go around an IPv6 address only, such as [::1]:8080"))
        }
        guard !host.isEmpty else {
            return .failure(HostPortError("'\(text)' has no host: expected HOST:PORT, such as 127.0.0.1:8080"))
        }
        guard let portText else {
            guard let defaultPort else {
                return .failure(HostPortError("'\(text)' has no port: expected HOST:PORT, such as 127.0.0.1:8080"))
            }
            return .success(HostPort(host: String(host), port: defaultPort))
        }
        guard let port = decimalPort(portText) else {
            return .failure(HostPortError("'\(text)': port '\(portText)' is not a number from 0 to 65535"))
        }
        return .success(HostPort(host: String(host), port: port))
    }

    /// What may stand between brackets: hex digits, colons (at least one) and dots (an
    /// IPv4 tail), then optionally `%` and a zone name (`fe80::1%eth0`).
    static func isIPv6Literal(_ text: Substring) -> Bool {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let address = parts[0]
        guard address.contains(":"), address.utf8.allSatisfy({ byte in
            byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }) else { return false }
        guard parts.count == 2 else { return true }
        let zone = parts[1]
        return !zone.isEmpty && zone.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
        }
    }

    /// `host:port`, with brackets around an IPv6 literal.
    public var description: String { "\(Self.bracketed(host)):\(port)" }

    /// The host as it stands in an authority: an IPv6 literal (it has colons) in brackets.
    public static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// One to five ASCII digits whose value is at most 65535: no sign, no spaces.
    static func decimalPort(_ text: Substring) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let port = Int(text), port <= 65535 else { return nil }
        return port
    }
}

/// Why a `HOST:PORT` (or a URL built on one) could not be read, for the user.
public struct HostPortError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
