import Capture
import Vocabulary

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
        // An ASCII address (every address a capture writes) is cut on its bytes, the same
        // answer as by characters and some 6,000 instructions less a connection; beyond
        // ASCII a `:` or `]` followed by a combining mark is no character of its own.
        let bytes = address.utf8
        if address.isASCIIOnly {
            if bytes.first == UInt8(ascii: "["), let close = bytes.firstIndex(of: UInt8(ascii: "]")) {
                return String(address[bytes.index(after: bytes.startIndex)..<close])
            }
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")), bytes.firstIndex(of: UInt8(ascii: ":")) == colon {
                return String(address[..<colon])
            }
            return address
        }
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
        // Most targets keep every parameter as written: then the target is its own stable
        // form, and no item is split out or joined again (this runs for every connection).
        keepsEveryParameter(target) ? target : rebuiltTarget(target)
    }

    /// `stableTarget` item by item: the path, then the kept parameters joined again.
    static func rebuiltTarget(_ target: String) -> String {
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        let kept = queryItems(of: target).filter { !volatileParameters.contains($0.name) }
        return kept.isEmpty ? path : path + "?" + kept.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Whether `stableTarget` would give `target` back unchanged: a query whose every item
    /// is `name=value` (none empty, which the split drops, none without `=`, which the join
    /// adds) and none volatile. Reads the bytes, making nothing. ASCII only: beyond it a
    /// `?`, `&` or `=` followed by a combining mark is not a `Character` of its own, so the
    /// slow path's `Character` split and this byte split could differ.
    static func keepsEveryParameter(_ target: String) -> Bool {
        guard target.isASCIIOnly else { return false }
        var target = target
        // In the string's storage: through the UTF-8 view's slices it was some 9,000
        // instructions a connection.
        return target.withUTF8 { bytes in
            guard let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return true }
            let query = bytes[(q + 1)...]
            guard !query.isEmpty else { return false }
            var itemStart = query.startIndex
            while true {
                let itemEnd = query[itemStart...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
                let item = query[itemStart..<itemEnd]
                guard let eq = item.firstIndex(of: UInt8(ascii: "=")) else { return false }
                let name = item[..<eq]
                if volatileParameterBytes.contains(where: { $0.elementsEqual(name) }) { return false }
                guard itemEnd < query.endIndex else { return true }
                itemStart = itemEnd + 1
                guard itemStart < query.endIndex else { return false }
            }
        }
    }

    private static let volatileParameterBytes: [[UInt8]] = volatileParameters.map { Array($0.utf8) }
}
