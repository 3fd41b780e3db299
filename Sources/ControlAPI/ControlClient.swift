import CUV
import Glibc
import Vocabulary
import WebSocket

/// A blocking HTTP/1.1 client for the control API (what `faultline ctl` uses): one request
/// per connection, every step bounded by `timeout`. Plain sockets, no event loop: a
/// command-line client sends one request and exits.
public struct ControlClient: Sendable {
    public let host: String
    public let port: Int
    public let token: String?
    /// Seconds allowed for connecting, and for each read or write.
    public var timeout: Double
    /// Largest response body read (16 MiB). The control API answers with small JSON
    /// documents and metrics; a peer sending more is not the control API (or is broken), and
    /// reading it all would only exhaust memory: the request fails with `.badResponse`.
    public var maxResponseBody = 16 << 20

    /// `address` is "HOST:PORT", "[V6]:PORT" or just "PORT" (127.0.0.1).
    public init(address: String, token: String? = nil, timeout: Double = 10) throws(ControlClientError) {
        guard let (host, port) = ControlClient.split(address) else {
            throw .badAddress("'\(address)' is not HOST:PORT (for example 127.0.0.1:8474)")
        }
        self.host = host
        self.port = port
        self.token = token
        self.timeout = timeout
    }

    /// "host:port" as given, for messages.
    public var address: String { HostPort(host: host, port: port).description }

    /// "HOST:PORT", or a bare "PORT" on 127.0.0.1; nil for anything else or port 0.
    static func split(_ address: String) -> (String, Int)? {
        let text = address.hasPrefix("[") || address.contains(":") ? address : "127.0.0.1:" + address
        guard case .success(let parsed) = HostPort.parse(text), parsed.port >= 1 else { return nil }
        return (parsed.host, parsed.port)
    }

    /// Sends one request and reads the whole response.
    public func send(_ method: String, _ target: String, body: [UInt8]? = nil,
                     contentType: String = "application/json") throws(ControlClientError) -> ControlResponse {
        let fd = try connect()
        defer { close(fd) }
        var headers = [HeaderField("Host", address), HeaderField("User-Agent", "faultline-ctl"),
                       HeaderField("Accept", "application/json, text/plain"), HeaderField("Connection", "close")]
        if let token { headers.append(HeaderField("Authorization", "Bearer \(token)")) }
        if let body {
            headers.append(HeaderField("Content-Type", contentType))
            headers.append(HeaderField("Content-Length", String(body.count)))
        }
        let request = HTTPRequestHead(method: method, target: target, headers: headers).serialized + (body ?? [])
        try writeAll(fd, request)
        return try readResponse(fd)
    }

    // MARK: Sockets

    func connect() throws(ControlClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .unreachable("cannot reach the control API at \(address): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { reason = String(cString: strerror(errno)); continue }
            if let error = connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) {
                reason = error
                close(fd)
                continue
            }
            setTimeouts(fd)
            return fd
        }
        throw .unreachable("cannot reach the control API at \(address): \(reason) (is 'faultline proxy --control \(address)' running?)")
    }

    /// Non-blocking connect bounded by `timeout`; nil on success, else the reason.
    private func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> String? {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        if Glibc.connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&poller, 1, Int32(timeout * 1000))
        if ready == 0 { return "timed out after \(timeout) s" }
        if ready < 0 { return String(cString: strerror(errno)) }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        return error == 0 ? nil : String(cString: strerror(error))
    }

    private func setTimeouts(_ fd: Int32) {
        var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(ControlClientError) {
        if let failure = FileDescriptorOutput.sendAll(fd, bytes) {
            throw .unreachable("sending to the control API at \(address): \(String(cString: strerror(failure)))")
        }
    }

    /// One `recv` into `chunk` (retried when a signal interrupts it): the byte count, 0 at
    /// the end of the stream, or the reason reading failed (the read timeout included).
    func receive(_ fd: Int32, into chunk: inout [UInt8]) throws(ControlClientError) -> Int {
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return n }
            if errno == EINTR { continue }
            let why = errno == EAGAIN ? "no answer within \(timeout) s" : String(cString: strerror(errno))
            throw .unreachable("reading from the control API at \(address): \(why)")
        }
    }

    /// Reads until the head and `Content-Length` bytes (or EOF) have arrived.
    private func readResponse(_ fd: Int32) throws(ControlClientError) -> ControlResponse {
        var parser = HTTPHeadParser()
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if let head, let length = head.headers.first(named: "Content-Length").flatMap({ Int($0) }), body.count >= length {
                return ControlResponse(status: head.status, headers: head.headers, body: Array(body.prefix(length)))
            }
            let n = try receive(fd, into: &chunk)
            if n == 0 {
                guard let head else { throw .badResponse("the control API at \(address) closed the connection without an answer") }
                return ControlResponse(status: head.status, headers: head.headers, body: body)
            }
            if head != nil {
                body += chunk[..<n]
                try checkBodySize(body.count)
                continue
            }
            parser.append(chunk[..<n])
            do {
                guard let parsed = try parser.parseResponse() else { continue }
                if parsed.status == 100 {   // interim answer: read the real one after it
                    let rest = parser.remainder
                    parser = HTTPHeadParser()
                    parser.append(rest)
                    if let real = try parser.parseResponse() { head = real; body = parser.remainder }
                    continue
                }
                head = parsed
                body = parser.remainder
            } catch {
                throw .badResponse("the answer from \(address) is not HTTP: \(error.message)")
            }
            if let length = head?.headers.first(named: "Content-Length").flatMap({ Int($0) }) { try checkBodySize(length) }
            try checkBodySize(body.count)
        }
    }

    /// A response body of `count` bytes (announced or read so far) within `maxResponseBody`.
    func checkBodySize(_ count: Int) throws(ControlClientError) {
        guard count > maxResponseBody else { return }
        throw .badResponse("the answer from \(address) has a body of more than \(maxResponseBody) bytes "
            + "(\(count) announced or read); the control API's answers are far smaller: is this the control API?")
    }
}

/// Why a control API request failed before an HTTP answer came back.
public enum ControlClientError: Error, Sendable, CustomStringConvertible {
    case badAddress(String)
    case unreachable(String)
    case badResponse(String)

    public var description: String {
        switch self {
        case .badAddress(let m), .unreachable(let m), .badResponse(let m): m
        }
    }
}
