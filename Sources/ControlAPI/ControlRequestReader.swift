import WebSocket

/// Reads one HTTP/1.1 request (head, then a `Content-Length` body) from bytes as they
/// arrive. Pure: the server feeds it reads and acts on each step. One request per
/// connection (the server answers with `Connection: close`), so bytes after the body are
/// ignored.
public struct ControlRequestReader: Sendable {
    public static let defaultMaxBodyBytes = 64 * 1024

    /// What to do after a read.
    public enum Step: Sendable, Hashable {
        /// Keep reading. `sendContinue`: the client sent `Expect: 100-continue` and waits
        /// for an interim `100 Continue` before its body (sent once).
        case needMore(sendContinue: Bool)
        case request(ControlRequest)
        /// The request cannot be served; answer this and close.
        case reject(ControlResponse)
    }

    enum State: Sendable {
        case readingHead(HTTPHeadParser)
        case readingBody(HTTPRequestHead, expected: Int, body: [UInt8])
        case finished
    }

    public let maxBodyBytes: Int
    private var state: State

    public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = ControlRequestReader.defaultMaxBodyBytes) {
        self.maxBodyBytes = maxBodyBytes
        state = .readingHead(HTTPHeadParser(maxHeadBytes: maxHeadBytes))
    }

    public mutating func feed(_ bytes: [UInt8]) -> Step {
        switch state {
        case .finished:
            return .needMore(sendContinue: false)
        case .readingBody(let head, let expected, var body):
            body.append(contentsOf: bytes.prefix(expected - body.count))
            return finishIfComplete(head, expected: expected, body: body)
        case .readingHead(var parser):
            parser.append(bytes)
            let head: HTTPRequestHead
            do {
                guard let parsed = try parser.parseRequest() else {
                    state = .readingHead(parser)
                    return .needMore(sendContinue: false)
                }
                head = parsed
            } catch {
                return reject(.error(error.status, "unreadable HTTP request: \(error.message)"))
            }
            if head.headers.first(named: "Transfer-Encoding") != nil {
                return reject(.error(501, "Transfer-Encoding bodies are not supported; send a Content-Length"))
            }
            let lengths = Set(head.headers.values(named: "Content-Length").map { $0.trimmingCharacters(in: " \t") })
            var expected = 0
            if let text = lengths.first {
                guard lengths.count == 1, let value = Int(text), value >= 0, text.allSatisfy(\.isNumber) else {
                    return reject(.error(400, "bad Content-Length '\(lengths.sorted().joined(separator: ", "))'"))
                }
                expected = value
            }
            guard expected <= maxBodyBytes else {
                return reject(.error(413, "the body has \(expected) bytes; at most \(maxBodyBytes) are accepted"))
            }
            let body = Array(parser.remainder.prefix(expected))
            let step = finishIfComplete(head, expected: expected, body: body)
            if case .needMore = step, body.isEmpty,
               head.headers.first(named: "Expect")?.lowercased() == "100-continue" {
                return .needMore(sendContinue: true)
            }
            return step
        }
    }

    private mutating func finishIfComplete(_ head: HTTPRequestHead, expected: Int, body: [UInt8]) -> Step {
        guard body.count == expected else {
            state = .readingBody(head, expected: expected, body: body)
            return .needMore(sendContinue: false)
        }
        state = .finished
        return .request(ControlRequest(method: head.method, target: head.target, headers: head.headers, body: body))
    }

    private mutating func reject(_ response: ControlResponse) -> Step {
        state = .finished
        return .reject(response)
    }
}
