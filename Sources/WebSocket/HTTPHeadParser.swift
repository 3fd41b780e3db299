import Glibc

/// Parses one HTTP/1.1 head (request or response) incrementally, on bytes; bytes after the
/// blank line stay in `remainder` (the first WebSocket frames may arrive in the same read).
///
/// Lines end in CRLF; a bare LF is tolerated (RFC 9112 2.2). Each appended byte is scanned
/// once for the line end; complete lines are kept as byte ranges and parsed only when the
/// blank line arrives. A head longer than `maxHeadBytes` fails with status 431.
public struct HTTPHeadParser: Sendable {
    public static let defaultMaxHeadBytes = 16 * 1024

    enum State: Sendable {
        /// Collecting lines; `scanIndex` is the first byte not yet looked at.
        case readingLines(lineStart: Int, scanIndex: Int)
        /// The blank line was seen; the head ends just before `bodyStart`.
        case complete(bodyStart: Int)
        case failed(HTTPParseError)
    }

    public let maxHeadBytes: Int
    private var buffer: [UInt8] = []
    private var state: State = .readingLines(lineStart: 0, scanIndex: 0)
    /// The head's lines without their line ends, empty lines before the start line dropped.
    private var lines: [Range<Int>] = []

    public init(maxHeadBytes: Int = HTTPHeadParser.defaultMaxHeadBytes) {
        self.maxHeadBytes = maxHeadBytes
    }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// Bytes appended so far (head and anything after it), for messages.
    public var bufferedByteCount: Int { buffer.count }

    /// Whether the blank line ending the head has arrived.
    public var isComplete: Bool {
        if case .complete = state { return true }
        return false
    }

    /// The request once its head is complete, nil while more bytes are needed.
    public mutating func parseRequest() throws(HTTPParseError) -> HTTPRequestHead? {
        guard try scan() else { return nil }
        // Split on bytes: a String split walks grapheme clusters, which cost more than the
        // whole rest of a connection's set-up when reading captures with many connections.
        let line = lines[0]
        let spaces = spaceIndices(in: line, limit: 3)
        guard spaces.count == 2, spaces[0] > line.lowerBound, spaces[1] > spaces[0] + 1,
              hasHTTPPrefix(spaces[1] + 1..<line.upperBound) else {
            throw HTTPParseError("malformed request line \"\(string(line))\" (expected METHOD TARGET HTTP/1.1)")
        }
        return HTTPRequestHead(method: string(line.lowerBound..<spaces[0]), target: string(spaces[0] + 1..<spaces[1]),
                               version: string(spaces[1] + 1..<line.upperBound), headers: try headerFields())
    }

    public mutating func parseResponse() throws(HTTPParseError) -> HTTPResponseHead? {
        guard try scan() else { return nil }
        let line = lines[0]
        let spaces = spaceIndices(in: line, limit: 2)
        let statusEnd = spaces.count == 2 ? spaces[1] : line.upperBound
        guard let firstSpace = spaces.first, hasHTTPPrefix(line.lowerBound..<firstSpace),
              statusEnd - firstSpace - 1 == 3,
              // Three digits (RFC 9112 status-code = 3DIGIT): `Int(_:)` alone also took
              // "-03" and "+99" (found by the http-head fuzz target).
              buffer[(firstSpace + 1)..<statusEnd].allSatisfy({ (0x30...0x39).contains($0) }),
              let status = Int(string(firstSpace + 1..<statusEnd)) else {
            throw HTTPParseError("malformed status line \"\(string(line))\" (expected HTTP/1.1 STATUS REASON)")
        }
        return HTTPResponseHead(version: string(line.lowerBound..<firstSpace), status: status,
                                reason: spaces.count == 2 ? string(spaces[1] + 1..<line.upperBound) : "",
                                headers: try headerFields())
    }

    /// Positions of the first `limit` spaces in `range` (a start line's separators).
    private func spaceIndices(in range: Range<Int>, limit: Int) -> [Int] {
        var found: [Int] = []
        for index in range where buffer[index] == 32 {
            found.append(index)
            if found.count == limit { break }
        }
        return found
    }

    private func hasHTTPPrefix(_ range: Range<Int>) -> Bool {
        let prefix: [UInt8] = [72, 84, 84, 80, 47]  // "HTTP/"
        return range.count >= prefix.count && buffer[range.lowerBound..<range.lowerBound + prefix.count].elementsEqual(prefix)
    }

    /// Bytes after the head, once parsed (empty before).
    public var remainder: [UInt8] {
        guard case .complete(let bodyStart) = state else { return [] }
        return Array(buffer[bodyStart...])
    }

    /// Scans new bytes for line ends; true once the head is complete.
    private mutating func scan() throws(HTTPParseError) -> Bool {
        switch state {
        case .complete: return true
        case .failed(let error): throw error
        case .readingLines(var lineStart, var index):
            // Never scan past the limit: a peer streaming an endless head costs O(limit).
            let end = min(buffer.count, maxHeadBytes)
            while index < end {
                // memchr finds the line end (vectorised); a byte loop with a bounds check
                // per byte was half the cost of decoding an upgrade from a pcap.
                guard let newline = buffer.withUnsafeBytes({ bytes in
                    memchr(bytes.baseAddress! + index, 10, end - index).map { UnsafeRawPointer($0) - bytes.baseAddress! }
                }) else {
                    index = end
                    break
                }
                index = newline
                var lineEnd = index
                if lineEnd > lineStart, buffer[lineEnd - 1] == 13 { lineEnd -= 1 }
                index += 1
                if lineEnd == lineStart {
                    if !lines.isEmpty {
                        state = .complete(bodyStart: index)
                        return true
                    }
                    // Empty lines before the start line are ignored (RFC 9112 2.2).
                } else {
                    lines.append(lineStart..<lineEnd)
                }
                lineStart = index
            }
            if index >= maxHeadBytes {
                let error = HTTPParseError("HTTP head exceeds \(maxHeadBytes) bytes without ending", status: 431)
                state = .failed(error)
                throw error
            }
            state = .readingLines(lineStart: lineStart, scanIndex: index)
            return false
        }
    }

    private func headerFields() throws(HTTPParseError) -> [HeaderField] {
        var fields: [HeaderField] = []
        fields.reserveCapacity(lines.count - 1)
        for range in lines.dropFirst() {
            let line = buffer[range]
            guard let first = line.first, first != 32, first != 9 else {
                throw HTTPParseError("folded header line \"\(string(range))\" (obsolete line folding is not accepted)")
            }
            guard let colon = line.firstIndex(of: 58) else {
                throw HTTPParseError("header line without a colon: \"\(string(range))\"")
            }
            let name = buffer[range.lowerBound..<colon]
            guard !name.isEmpty, !name.contains(where: { $0 <= 32 || $0 == 127 }) else {
                throw HTTPParseError("invalid header name in \"\(string(range))\"")
            }
            // Trimmed on bytes: spaces and tabs are single bytes, so a cut never splits a character.
            var valueStart = colon + 1, valueEnd = range.upperBound
            while valueStart < valueEnd, buffer[valueStart] == 32 || buffer[valueStart] == 9 { valueStart += 1 }
            while valueEnd > valueStart, buffer[valueEnd - 1] == 32 || buffer[valueEnd - 1] == 9 { valueEnd -= 1 }
            fields.append(HeaderField(String(decoding: name, as: UTF8.self), string(valueStart..<valueEnd)))
        }
        return fields
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: buffer[range], as: UTF8.self)
    }
}
