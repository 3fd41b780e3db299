import CUV
import Glibc

/// Opens outgoing TCP connections.
public enum TCPConnector {
    /// Connects to `host:port`. `host` may be a name (resolved with `uv_getaddrinfo` on
    /// libuv's thread pool, so the loop never blocks), an IPv4 address or an IPv6 address
    /// (brackets allowed). Every resolved address is tried in order until one answers.
    ///
    /// `completion` runs once on the loop thread, with the connection (reading starts when
    /// the completion returns; see `TCPConnection`) or an error naming `host:port` and the
    /// reason: "connect to db:5432: connection refused", "...: timed out" (after `timeout`
    /// microseconds for the whole attempt, DNS included), "...: no such host".
    /// The returned attempt can be cancelled; a cancelled attempt never calls `completion`.
    @discardableResult
    public static func connect(loop: EventLoop, host: String, port: Int, timeout: Int64 = 10_000_000,
                               completion: @escaping (Result<TCPConnection, TransportError>) -> Void) -> ConnectAttempt {
        loop.assertOnLoopThread("TCPConnector.connect")
        let attempt = ConnectAttempt(loop: loop, host: host, port: port, completion: completion)
        attempt.begin(timeout: timeout)
        return attempt
    }
}

/// One `TCPConnector.connect` in progress: resolving, then trying addresses one by one.
///
/// Kept alive by its pending libuv requests (each holds a retain in its `data`). The handle
/// being connected points back at the attempt *unretained* (the connect request's retain
/// covers it; `data` is cleared before the handle is closed), so `EventLoop.close()` can
/// find and cancel an attempt still in progress.
public final class ConnectAttempt: HandleOwner {
    public let loop: EventLoop
    public let host: String
    public let port: Int
    private var completion: ((Result<TCPConnection, TransportError>) -> Void)?
    private var timer: TimerHandle?
    /// Resolved addresses not tried yet.
    private var addresses: [sockaddr_storage] = []
    private var resolving: UnsafeMutablePointer<uv_getaddrinfo_t>?
    private var connecting: UnsafeMutablePointer<uv_tcp_t>?
    private var lastError: Int32 = UV_ECONNREFUSED.rawValue

    init(loop: EventLoop, host: String, port: Int, completion: @escaping (Result<TCPConnection, TransportError>) -> Void) {
        self.loop = loop
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        self.completion = completion
    }

    private var display: String { SocketAddress.display(host: host, port: port) }

    /// Whether the attempt has finished (or was cancelled).
    public var isFinished: Bool { completion == nil }

    func begin(timeout: Int64) {
        guard (1...65535).contains(port) else {
            finish(.failure(TransportError("connect to \(display): port out of range")), deferred: true)
            return
        }
        timer = loop.schedule(after: timeout) { [self] in
            finish(.failure(TransportError.uv("connect to \(display)", UV_ETIMEDOUT.rawValue)))
        }
        var numeric = sockaddr_storage()
        if SocketAddress.parseNumeric(host: host, port: port, into: &numeric) && host != "localhost" {
            addresses = [numeric]
            tryNext()
            return
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        resolving = request
        let status = uv_getaddrinfo(loop.uvLoop, request, { request, status, info in
            guard let request else { return }
            let me = Unmanaged<ConnectAttempt>.fromOpaque(request.pointee.data).takeRetainedValue()
            request.deallocate()
            me.resolved(status, info)
            uv_freeaddrinfo(info)
        }, host, String(port), &hints)
        if status != 0 {
            Unmanaged<ConnectAttempt>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            resolving = nil
            finish(.failure(TransportError.uv("connect to \(display)", status)), deferred: true)
        }
    }

    private func resolved(_ status: Int32, _ info: UnsafeMutablePointer<addrinfo>?) {
        resolving = nil
        guard !isFinished else { return }
        guard status == 0 else {
            finish(.failure(TransportError.uv("connect to \(display)", status)))
            return
        }
        var node = info
        while let entry = node {
            if let address = entry.pointee.ai_addr,
               entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen)))
                }
                addresses.append(storage)
            }
            node = entry.pointee.ai_next
        }
        if addresses.isEmpty { lastError = UV_EAI_NONAME.rawValue }
        tryNext()
    }

    /// Starts connecting to the next address, or fails with the last error if none is left.
    private func tryNext() {
        guard !isFinished else { return }
        guard !addresses.isEmpty else {
            finish(.failure(TransportError.uv("connect to \(display)", lastError)))
            return
        }
        var address = addresses.removeFirst()
        let tcp = UV.newTCP(loop)
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        connecting = tcp
        tcp.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                uv_tcp_connect(request, tcp, address) { request, status in
                    guard let request else { return }
                    let me = Unmanaged<ConnectAttempt>.fromOpaque(request.pointee.data).takeRetainedValue()
                    let tcp = UnsafeMutableRawPointer(request.pointee.handle!).assumingMemoryBound(to: uv_tcp_t.self)
                    request.deallocate()
                    me.connected(tcp, status)
                }
            }
        }
        if status != 0 {
            Unmanaged<ConnectAttempt>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            connecting = nil
            abandon(tcp)
            lastError = status
            tryNext()
        }
    }

    /// Closes a handle that did not (or will not) become a connection.
    private func abandon(_ tcp: UnsafeMutablePointer<uv_tcp_t>) {
        tcp.pointee.data = nil
        uv_close(CUV_handle(tcp), UV.freeOnClose)
    }

    private func connected(_ tcp: UnsafeMutablePointer<uv_tcp_t>, _ status: Int32) {
        guard connecting == tcp else { return }  // a handle we already gave up on (timeout, cancel)
        connecting = nil
        guard status == 0 else {
            abandon(tcp)
            lastError = status
            tryNext()
            return
        }
        let connection = TCPConnection(loop: loop, tcp: tcp)
        finish(.success(connection))
        connection.start()
    }

    /// Gives up: no completion will run. Idempotent.
    public func cancel() {
        completion = nil
        cleanUp()
    }

    func closeForLoopShutdown() { cancel() }

    private func finish(_ result: Result<TCPConnection, TransportError>, deferred: Bool = false) {
        guard let completion else { return }
        self.completion = nil
        cleanUp()
        if deferred {
            loop.schedule(after: 0) { completion(result) }  // never complete before connect() returns
        } else {
            completion(result)
        }
    }

    private func cleanUp() {
        timer?.cancel()
        timer = nil
        if let request = resolving {
            uv_cancel(UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self))
        }
        if let tcp = connecting {
            connecting = nil
            abandon(tcp)  // its connect callback then sees ECANCELED
        }
    }
}
