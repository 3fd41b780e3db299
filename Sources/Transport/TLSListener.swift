/// A listening socket whose clients speak TLS: each accepted TCP connection runs a server
/// handshake, and only connections whose handshake succeeded reach `onAccept` (reading
/// starts when it returns). A failed handshake (a plain-HTTP client, a client that
/// rejects our certificate) goes to `onHandshakeError` and the socket is closed.
public final class TLSListener {
    public let listener: TCPListener
    public let context: TLSContext
    public var localAddress: String { listener.localAddress }
    public var port: Int { listener.port }
    /// A client's handshake failed: "TLS handshake with 127.0.0.1:5123 failed: <reason>".
    public var onHandshakeError: ((TransportError) -> Void)? {
        get { errorBox.report }
        set { errorBox.report = newValue }
    }
    /// Accepting itself failed (see `TCPListener.onAcceptError`).
    public var onAcceptError: ((TransportError) -> Void)? {
        get { listener.onAcceptError }
        set { listener.onAcceptError = newValue }
    }

    /// Binds and listens like `TCPListener` (same `host` rules, same errors). `context`
    /// must be a server context. `handshakeTimeout` bounds each client's handshake.
    public init(loop: EventLoop, host: String = "127.0.0.1", port: Int, context: TLSContext,
                handshakeTimeout: Int64 = 10_000_000,
                onAccept: @escaping (TLSConnection) -> Void) throws {
        precondition(context.role == .server, "TLSListener needs a server context")
        self.context = context
        let box = ErrorBox()
        listener = try TCPListener(loop: loop, host: host, port: port) { tcp in
            TLSConnection.server(over: tcp, context: context, timeout: handshakeTimeout) { result in
                switch result {
                case .success(let connection): onAccept(connection)
                case .failure(let error): box.report?(error)
                }
            }
        }
        errorBox = box
    }

    private let errorBox: ErrorBox

    /// Stops listening; connections already accepted stay open.
    public func close() { listener.close() }

    /// `onHandshakeError` set after `init`; the accept closure must not capture `self`.
    private final class ErrorBox { var report: ((TransportError) -> Void)? }
}
