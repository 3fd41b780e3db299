import CUV
import Glibc

/// A listening TCP socket. Each accepted connection is handed to `onAccept` on the loop
/// thread; set its callbacks there (reading starts when `onAccept` returns).
public final class TCPListener: HandleOwner {
    public let loop: EventLoop
    /// The bound address, `"127.0.0.1:port"` or `"[::1]:port"`: with port 0 the kernel's choice.
    public let localAddress: String
    /// The bound port (useful after asking for port 0).
    public let port: Int
    /// Called when accepting fails (for example out of file descriptors); the listener keeps going.
    public var onAcceptError: ((TransportError) -> Void)?

    private var tcp: UnsafeMutablePointer<uv_tcp_t>?
    private var onAccept: ((TCPConnection) -> Void)?

    /// Binds and listens. `host` is a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"::1"`,
    /// `"0.0.0.0"`, `"::"`; brackets allowed) or `"localhost"` (127.0.0.1); `port` 0 picks a
    /// free port. Throws "listen on HOST:PORT: <reason>".
    public init(loop: EventLoop, host: String = "127.0.0.1", port: Int, backlog: Int32 = 511,
                onAccept: @escaping (TCPConnection) -> Void) throws {
        loop.assertOnLoopThread("TCPListener.init")
        let display = SocketAddress.display(host: host, port: port)
        var storage = sockaddr_storage()
        guard (0...65535).contains(port), SocketAddress.parseNumeric(host: host, port: port, into: &storage) else {
            throw TransportError("listen on \(display): not a numeric IP address and port")
        }
        self.loop = loop
        self.onAccept = onAccept
        let tcp = UV.newTCP(loop)
        var status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(tcp, $0, 0) }
        }
        if status == 0 {
            // libuv may defer a bind error (EADDRINUSE) until listen.
            status = uv_listen(CUV_stream(tcp), backlog) { server, status in
                TCPListener.owner(of: CUV_handle(server))?.accept(status)
            }
        }
        guard status == 0 else {
            uv_close(CUV_handle(tcp), UV.freeOnClose)
            throw TransportError.uv("listen on \(display)", status)
        }
        let bound = SocketAddress.of(tcp, peer: false) ?? display
        localAddress = bound
        self.port = Int(bound.split(separator: ":").last.flatMap { Int($0) } ?? port)
        self.tcp = tcp
        tcp.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    private func accept(_ status: Int32) {
        guard let tcp else { return }
        guard status == 0 else {
            onAcceptError?(TransportError.uv("accept on \(localAddress)", status))
            return
        }
        let client = UV.newTCP(loop)
        let accepted = uv_accept(CUV_stream(tcp), CUV_stream(client))
        guard accepted == 0 else {
            uv_close(CUV_handle(client), UV.freeOnClose)
            onAcceptError?(TransportError.uv("accept on \(localAddress)", accepted))
            return
        }
        let connection = TCPConnection(loop: loop, tcp: client)
        onAccept?(connection)
        connection.start()
    }

    /// Stops listening and closes the socket; accepted connections stay open. Idempotent.
    public func close() {
        guard let tcp else { return }
        self.tcp = nil
        onAccept = nil
        onAcceptError = nil
        uv_close(CUV_handle(tcp)) { handle in
            _ = TCPListener.release(from: handle)
            UV.freeOnClose(handle)
        }
    }

    func closeForLoopShutdown() { close() }
}
