import Capture

/// How connections are grouped into clients (`--client-key`).
public enum ClientKeyMode: Sendable, Hashable, CustomStringConvertible {
    /// Source IP, User-Agent, and request path with query minus volatile parameters.
    case standard
    /// The value of one request header.
    case header(String)
    /// The value of one query parameter.
    case query(String)

    /// Parses `header:NAME` or `query:NAME`; nil for anything else.
    public init?(parsing text: String) {
        if text == "default" { self = .standard; return }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let kind = text[..<colon]
        let name = String(text[text.index(after: colon)...])
        guard !name.isEmpty else { return nil }
        switch kind {
        case "header": self = .header(name)
        case "query": self = .query(name)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .standard: "source IP + User-Agent + path and query without volatile parameters (\(ClientKeyMode.volatileParameters.joined(separator: ", "))); overlapping connections of one key are different clients"
        case .header(let name): "header \(name); overlapping connections of one key are different clients"
        case .query(let name): "query parameter \(name); overlapping connections of one key are different clients"
        }
    }

    /// Query parameters that change from one connection to the next of the same client.
    public static let volatileParameters = ["auth", "nonce", "signature", "socket_id", "t", "token", "ts", "timestamp", "_"]

    /// The key of a connection from its open record and upgrade request (either may be missing).
    public func key(open: OpenRecord?, request: UpgradeRecord?) -> String {
        switch self {
        case .standard:
            let ip = open.map { Self.host(of: $0.client) } ?? "?"
            let agent = request?.header("User-Agent") ?? "-"
            let target = request?.target.map(Self.stableTarget) ?? "-"
            return "\(ip) | \(agent) | \(target)"
        case .header(let name):
            return "\(name)=\(request?.header(name) ?? "(none)")"
        case .query(let name):
            let value = request?.target.flatMap { Self.queryItems(of: $0).first { $0.name == name }?.value }
            return "\(name)=\(value ?? "(none)")"
        }
    }

    /// "127.0.0.1:5000" -> "127.0.0.1"; "[::1]:5000" -> "::1".
    static func host(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        if let colon = address.lastIndex(of: ":"), address.firstIndex(of: ":") == colon {
            return String(address[..<colon])
        }
        return address
    }

    static func queryItems(of target: String) -> [(name: String, value: String)] {
        guard let q = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: q)...].split(separator: "&").map { item in
            if let eq = item.firstIndex(of: "=") {
                return (String(item[..<eq]), String(item[item.index(after: eq)...]))
            }
            return (String(item), "")
        }
    }

    /// The path plus the query without volatile parameters.
    static func stableTarget(_ target: String) -> String {
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        let kept = queryItems(of: target).filter { !volatileParameters.contains($0.name) }
        return kept.isEmpty ? path : path + "?" + kept.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}
