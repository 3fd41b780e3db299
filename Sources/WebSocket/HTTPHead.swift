// HTTP/1.1 heads as values: what the parser produces and what a client or server sends.
// Header order, name case and values stay exactly as given, so a relay reproduces them.

public struct HTTPRequestHead: Sendable, Hashable {
    public var method: String
    public var target: String
    public var version: String
    public var headers: [HeaderField]
    public init(method: String, target: String, version: String = "HTTP/1.1", headers: [HeaderField]) {
        self.method = method; self.target = target; self.version = version; self.headers = headers
    }

    /// GET with `Upgrade: websocket`, `Connection: upgrade`, a key and version 13.
    public var isWebSocketUpgrade: Bool {
        method == "GET"
            && headers.containsToken("websocket", inHeadersNamed: "Upgrade")
            && headers.containsToken("upgrade", inHeadersNamed: "Connection")
            && headers.first(named: "Sec-WebSocket-Key").map { !$0.isEmpty } == true
            && headers.first(named: "Sec-WebSocket-Version")?.trimmingHTTPWhitespace() == "13"
    }

    public var serialized: [UInt8] {
        var line: [UInt8] = []
        HTTPHeadText.appendField(method, allowingTab: false, to: &line)
        line.append(32)
        HTTPHeadText.appendTarget(target, to: &line)
        line.append(32)
        HTTPHeadText.appendField(version, allowingTab: false, to: &line)
        return serializeHead(startLine: line, headers: headers)
    }
}

public struct HTTPResponseHead: Sendable, Hashable {
    public var version: String
    public var status: Int
    public var reason: String
    public var headers: [HeaderField]
    public init(version: String = "HTTP/1.1", status: Int, reason: String, headers: [HeaderField]) {
        self.version = version; self.status = status; self.reason = reason; self.headers = headers
    }

    public var serialized: [UInt8] {
        var line: [UInt8] = []
        HTTPHeadText.appendField(version, allowingTab: false, to: &line)
        line.append(contentsOf: " \(status) ".utf8)
        HTTPHeadText.appendField(reason, allowingTab: true, to: &line)
        return serializeHead(startLine: line, headers: headers)
    }
}

public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The HTTP status a server should answer with (400, 431).
    public var status: Int
    public init(_ message: String, status: Int = 400) { self.message = message; self.status = status }
    public var description: String { message }
}

extension Array where Element == HeaderField {
    /// Every value of a header, names matched case-insensitively, in order.
    public func values(named name: String) -> [String] {
        filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Whether any comma-separated element of the named headers equals `token`, ignoring
    /// case (`Connection: keep-alive, Upgrade`).
    public func containsToken(_ token: String, inHeadersNamed name: String) -> Bool {
        values(named: name).contains { value in
            value.utf8.split(separator: 44).contains { element in
                String(Substring(element)).trimmingHTTPWhitespace().equalsIgnoringASCIICase(token)
            }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    /// Works on UTF-8 bytes: spaces and tabs are single bytes, so the cuts never split a
    /// character, and no grapheme breaking is needed.
    func trimmingHTTPWhitespace() -> String {
        let bytes = utf8
        var start: Index?
        var end = bytes.startIndex
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let next = bytes.index(after: index)
            if bytes[index] != 32 && bytes[index] != 9 {
                if start == nil { start = index }
                end = next
            }
            index = next
        }
        guard let start else { return "" }
        return String(self[start..<end])
    }

    /// Equality ignoring ASCII case, as HTTP compares header names and tokens (which are
    /// ASCII); no lowercased copies.
    public func equalsIgnoringASCIICase<Other: StringProtocol>(_ other: Other) -> Bool {
        // From both strings' storage where they have one (native strings do): the views'
        // iterators, unspecialized, were most of a header lookup's cost.
        let inPlace = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                mine.count == theirs.count && zip(mine, theirs).allSatisfy { sameIgnoringASCIICase($0, $1) }
            }
        }
        if let inPlace = inPlace ?? nil { return inPlace }
        return utf8.elementsEqual(other.utf8, by: sameIgnoringASCIICase)
    }

    /// Whether `needle` occurs in the string, ignoring ASCII case.
    public func containsIgnoringASCIICase(_ needle: String) -> Bool {
        let haystack = Array(utf8), pattern = Array(needle.utf8)
        guard pattern.count <= haystack.count else { return false }
        guard !pattern.isEmpty else { return true }
        for start in 0...(haystack.count - pattern.count) {
            var matched = true
            for i in 0..<pattern.count {
                if !sameIgnoringASCIICase(haystack[start + i], pattern[i]) { matched = false; break }
            }
            if matched { return true }
        }
        return false
    }
}

/// Two bytes equal, or the same ASCII letter in either case.
@inline(__always)
private func sameIgnoringASCIICase(_ a: UInt8, _ b: UInt8) -> Bool {
    a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 97 && (a | 0x20) <= 122)
}

/// The one place a head becomes bytes. Every part goes through `HTTPHeadText`, so no
/// control character reaches the wire whatever a caller passes (a recorded reason, a
/// peer's header value).
private func serializeHead(startLine: [UInt8], headers: [HeaderField]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(64 + headers.count * 32)
    out.append(contentsOf: startLine)
    out.append(contentsOf: [13, 10])
    for field in headers {
        HTTPHeadText.appendField(field.name, allowingTab: false, to: &out)
        out.append(contentsOf: [58, 32])
        HTTPHeadText.appendField(field.value, allowingTab: true, to: &out)
        out.append(contentsOf: [13, 10])
    }
    out.append(contentsOf: [13, 10])
    return out
}
