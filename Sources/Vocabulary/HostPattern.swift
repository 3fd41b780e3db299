/// A `host=` scope as routes and fault rules write it: a name (`example.com`), a
/// wildcard over the names below one (`*.example.com`), either with a port
/// (`example.com:8080`) to match that port only.
public enum HostPattern {
    /// Whether a request's `Host` header is in `pattern`'s scope, case-insensitively. A
    /// pattern without a port matches the header's host whatever its port.
    public static func matches(_ pattern: String, hostHeader: String) -> Bool {
        let wanted = pattern.lowercased()
        let header = hostHeader.lowercased()
        let name = splitPort(wanted).hasPort ? header : splitPort(header).host
        if wanted.hasPrefix("*.") { return name.hasSuffix(wanted.dropFirst()) && name.count >= wanted.count }
        return name == wanted
    }

    /// "h:80" -> ("h", true); "[::1]:80" -> ("[::1]", true); "h", "::1" -> (itself, false).
    static func splitPort(_ text: String) -> (host: String, hasPort: Bool) {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return (String(text[...close]), text[text.index(after: close)...].hasPrefix(":"))
        }
        guard text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") else { return (text, false) }
        return (String(text[..<colon]), true)
    }
}
