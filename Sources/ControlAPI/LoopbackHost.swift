/// Which host names and addresses count as loopback, for the listen address check and the
/// `Host` header check (DNS rebinding).
public enum LoopbackHost {
    /// "127.0.0.1", any 127.x.y.z, "::1" (brackets allowed), "localhost".
    public static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255
        }
    }

    /// A `Host` header value ("127.0.0.1:8474", "[::1]:8474", "localhost") names loopback.
    public static func isLoopback(hostHeader value: String) -> Bool {
        let value = value.trimmingCharacters(in: " \t")
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return false }
            return isLoopback(host: String(value[...close]))
        }
        let host = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return isLoopback(host: host)
    }
}
