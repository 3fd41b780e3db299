import Glibc
import WebSocket

extension ControlClient {
    /// `GET target` on a streaming endpoint (`/events`): waits (bounded by `timeout`) for the
    /// response head, then hands each complete line of the body to `line` as it arrives,
    /// without a read timeout, until the server closes. A non-200 answer is returned whole,
    /// for the caller to report; nil means the stream ran to its end.
    public func stream(_ target: String, line: (String) -> Void) throws(ControlClientError) -> ControlResponse? {
        var headers = [HeaderField("Host", address), HeaderField("User-Agent", "faultline-ctl"),
                       HeaderField("Accept", "application/x-ndjson"), HeaderField("Connection", "close")]
        if let token { headers.append(HeaderField("Authorization", "Bearer \(token)")) }
        let fd = try connect()
        defer { close(fd) }
        try writeAll(fd, HTTPRequestHead(method: "GET", target: target, headers: headers).serialized)
        var parser = HTTPHeadParser()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var pending: [UInt8] = []
        var head: HTTPResponseHead?
        while true {
            let n = try receive(fd, into: &chunk)
            if n == 0 {
                guard let head else { throw .badResponse("the control API at \(address) closed the connection without an answer") }
                return head.status == 200 ? nil : ControlResponse(status: head.status, headers: head.headers, body: pending)
            }
            if head == nil {
                parser.append(chunk[..<n])
                do {
                    guard let parsed = try parser.parseResponse() else { continue }
                    head = parsed
                    pending = parser.remainder
                } catch {
                    throw .badResponse("the answer from \(address) is not HTTP: \(error.message)")
                }
                if parsed(head) != 200 { continue }
                // Live now: events may be minutes apart.
                var none = timeval(tv_sec: 0, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
            } else {
                pending += chunk[..<n]
            }
            guard parsed(head) == 200 else {
                try checkBodySize(pending.count)   // an error answer is kept whole: bounded
                continue
            }
            while let newline = pending.firstIndex(of: 10) {
                line(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            if pending.count > 1 << 20 { throw .badResponse("a line of more than 1 MiB from \(address)") }
        }
    }

    private func parsed(_ head: HTTPResponseHead?) -> Int { head?.status ?? 0 }
}
