import COpenSSL
import Glibc

/// A TLS session over a `TCPConnection`, with the same surface (`ByteStream`): `onRead`
/// gets plaintext, `write` takes plaintext. OpenSSL never touches the socket: it works on
/// two memory BIOs, and this class moves ciphertext between them and the libuv connection,
/// so nothing ever blocks the loop.
///
/// Made by `TLSConnection.client(over:...)` / `.server(over:...)` (or `TLSConnector` and
/// `TLSListener`), whose completion gets the connection once the handshake has succeeded,
/// or the handshake's failure with OpenSSL's reason: "certificate verify failed: unable to
/// get local issuer certificate", "certificate verify failed: hostname mismatch",
/// "certificate verify failed: certificate has expired", "wrong version number"...
/// As with TCP, reading (delivery of plaintext) starts when that completion returns, unless
/// it called `pauseReading()`.
///
/// Ending, where TLS adds to `TCPConnection`:
/// - `onEnd(.fin)` when the peer sent close_notify, or closed TCP without one (common in
///   practice; `peerSentCloseNotify` tells them apart). `.reset`/`.error` as for TCP; a TLS
///   protocol error (a bad record) is `.error("TLS: <reason>")` and closes the connection.
/// - `shutdown()` sends close_notify, then FIN; `close()` and `closeAfterFlush()` send
///   close_notify first if it was not sent yet; `reset()` sends nothing (RST).
///
/// Backpressure: `writeQueueBytes`, the water marks and `onDrain` are the TCP connection's,
/// counted in ciphertext (a little more than the plaintext written).
public final class TLSConnection: ByteStream {
    public let tcp: TCPConnection
    public let context: TLSContext
    public var loop: EventLoop { tcp.loop }
    public var localAddress: String { tcp.localAddress }
    public var remoteAddress: String { tcp.remoteAddress }

    /// Plaintext from the peer.
    public var onRead: (([UInt8]) -> Void)?
    public var onEnd: ((StreamEnd) -> Void)?
    public var onDrain: (() -> Void)?
    public var onClose: (() -> Void)?
    public var lowWaterMark: Int {
        get { tcp.lowWaterMark }
        set { tcp.lowWaterMark = newValue }
    }
    public var highWaterMark: Int {
        get { tcp.highWaterMark }
        set { tcp.highWaterMark = newValue }
    }
    public var writeQueueBytes: Int { tcp.writeQueueBytes }
    public var isOverHighWater: Bool { tcp.isOverHighWater }
    public var isClosed: Bool { tcp.isClosed }

    /// The negotiated version ("TLSv1.3"), once the handshake is done.
    public private(set) var protocolVersion = ""
    /// The negotiated cipher suite ("TLS_AES_256_GCM_SHA384"), once the handshake is done.
    public private(set) var cipher = ""
    /// Server side: the host name the client asked for (SNI), if any.
    public private(set) var requestedServerName: String?
    /// Whether the peer ended its side with close_notify (false: TCP FIN without one).
    public private(set) var peerSentCloseNotify = false

    private enum State {
        case handshaking((Result<TLSConnection, TransportError>) -> Void)
        case open
        case failed
    }

    private var ssl: OpaquePointer?
    private let input: OpaquePointer   // ciphertext from the socket, read by OpenSSL
    private let output: OpaquePointer  // ciphertext written by OpenSSL, for the socket
    private var state: State
    private let peerName: String
    private var handshakeTimer: TimerHandle?
    private var readingWanted = true
    private var delivering = false
    private var readEnded = false
    private var sentCloseNotify = false
    private var drainScheduled = false
    /// Buffered ciphertext at or below which `resumeReading` reads the socket again at once.
    private static let inputLowWater = 64 * 1024
    /// close_notify or TCP FIN arrived: reported as `.fin` once the plaintext before it has
    /// been delivered and reading is wanted.
    private var endPending = false

    // MARK: Making

    /// Starts the client side of a handshake on a fresh connection (call it inside the
    /// connect completion, before reading starts). `serverName` is sent as SNI (unless it
    /// is an IP address) and, when `context` verifies, checked against the certificate's
    /// names (DNS names, or IP addresses for an IP). `completion` runs once on the loop
    /// thread; after a failure the TCP connection is closed (after sending OpenSSL's alert).
    public static func client(over tcp: TCPConnection, context: TLSContext, serverName: String?,
                              timeout: Int64 = 10_000_000,
                              completion: @escaping (Result<TLSConnection, TransportError>) -> Void) {
        precondition(context.role == .client, "TLSConnection.client needs a client context")
        let port = tcp.remoteAddress.split(separator: ":").last.flatMap { Int($0) }
        let peerName = serverName.flatMap { name in port.map { SocketAddress.display(host: name, port: $0) } }
        let connection = TLSConnection(tcp: tcp, context: context, peerName: peerName ?? tcp.remoteAddress,
                                       completion: completion)
        if let ssl = connection.ssl {
            SSL_set_connect_state(ssl)
            if let serverName, !serverName.isEmpty {
                let isIP = TLSConnection.isIPAddress(serverName)
                if !isIP { _ = COpenSSL_SSL_set_tlsext_host_name(ssl, serverName) }
                if context.verifies {
                    // No fallback to the subject's common name when the certificate has no
                    // subjectAltName of the right type: browsers dropped it (RFC 6125 6.4.4
                    // allows it only for legacy), and OpenSSL still does it by default.
                    X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl), UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT))
                    if isIP {
                        _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
                    } else {
                        _ = SSL_set1_host(ssl, serverName)
                    }
                }
            }
        }
        connection.begin(timeout: timeout)
    }

    /// Starts the server side of a handshake on a freshly accepted connection (call it
    /// inside the accept callback). Same completion rules as `client`. `initialBytes`: the
    /// start of the client's handshake, already read from `tcp` (a forward proxy reads the
    /// first bytes of a CONNECT tunnel to tell TLS from plain text).
    public static func server(over tcp: TCPConnection, context: TLSContext, timeout: Int64 = 10_000_000,
                              initialBytes: [UInt8] = [],
                              completion: @escaping (Result<TLSConnection, TransportError>) -> Void) {
        precondition(context.role == .server, "TLSConnection.server needs a server context")
        let connection = TLSConnection(tcp: tcp, context: context, peerName: tcp.remoteAddress, completion: completion)
        if let ssl = connection.ssl { SSL_set_accept_state(ssl) }
        connection.begin(timeout: timeout)
        if !initialBytes.isEmpty { connection.received(initialBytes) }
    }

    private init(tcp: TCPConnection, context: TLSContext, peerName: String,
                 completion: @escaping (Result<TLSConnection, TransportError>) -> Void) {
        self.tcp = tcp
        self.context = context
        self.peerName = peerName
        state = .handshaking(completion)
        input = BIO_new(BIO_s_mem())
        output = BIO_new(BIO_s_mem())
        ssl = SSL_new(context.ctx)
        if let ssl {
            SSL_set_bio(ssl, input, output)  // the SSL owns both BIOs from here
        } else {
            BIO_free(input)
            BIO_free(output)
        }
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    private func begin(timeout: Int64) {
        tcp.onRead = { [self] bytes in received(bytes) }
        tcp.onEnd = { [self] end in tcpEnded(end) }
        tcp.onDrain = { [self] in onDrain?() }
        tcp.onClose = { [self] in tcpClosed() }
        guard ssl != nil else {
            loop.schedule(after: 0) { [self] in handshakeFailed("cannot create a TLS session: \(TLSErrors.drain(default: "out of memory"))") }
            return
        }
        handshakeTimer = loop.schedule(after: timeout) { [self] in handshakeFailed("timed out") }
        advanceHandshake()
    }

    // MARK: Handshake

    private func advanceHandshake() {
        guard case .handshaking = state, let ssl else { return }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        let error = result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, result)
        let reason = error == SSL_ERROR_NONE || error == SSL_ERROR_WANT_READ ? nil : failureReason()
        flushOutput()  // our next flight, or the alert that tells the peer why we gave up
        if result == 1 {
            handshakeDone()
        } else if let reason {
            handshakeFailed(reason)
        }
    }

    /// Why the handshake failed: the certificate check's own reason when that was it,
    /// else OpenSSL's error queue.
    private func failureReason() -> String {
        if context.role == .client, context.verifies, let ssl {
            let result = SSL_get_verify_result(ssl)
            if result != X509_V_OK {
                ERR_clear_error()
                return "certificate verify failed: \(TLSErrors.verifyReason(result))"
            }
        }
        return TLSErrors.drain(default: "the peer ended the handshake")
    }

    private func handshakeDone() {
        guard case .handshaking(let completion) = state, let ssl else { return }
        state = .open
        handshakeTimer?.cancel()
        handshakeTimer = nil
        protocolVersion = String(cString: SSL_get_version(ssl))
        if let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_get_name(cipher) {
            self.cipher = String(cString: name)
        }
        if let name = SSL_get_servername(ssl, Int32(TLSEXT_NAMETYPE_host_name)) {
            requestedServerName = String(cString: name)
        }
        completion(.success(self))
        // Application data may have come with the handshake's last flight.
        drainPlaintext()
    }

    private func handshakeFailed(_ reason: String) {
        guard case .handshaking(let completion) = state else { return }
        state = .failed
        handshakeTimer?.cancel()
        handshakeTimer = nil
        tcp.onRead = nil
        tcp.onEnd = nil
        tcp.onDrain = nil
        tcp.closeAfterFlush()
        completion(.failure(TransportError("TLS handshake with \(peerName) failed: \(reason)")))
    }

    // MARK: Reading

    private func received(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = BIO_write(input, $0.baseAddress, Int32($0.count)) }
        switch state {
        case .handshaking: advanceHandshake()
        case .open: drainPlaintext()
        case .failed: break
        }
    }

    /// Decrypts what OpenSSL can and hands it to `onRead`, batch by batch, while reading is
    /// wanted; stops at "need more ciphertext", close_notify or an error.
    private func drainPlaintext() {
        guard case .open = state, !delivering else { return }
        delivering = true
        defer { delivering = false }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while readingWanted, !readEnded, let ssl {
            var plaintext: [UInt8] = []
            var stop: Int32 = SSL_ERROR_NONE
            var reason = ""
            while plaintext.count < 64 * 1024 {
                ERR_clear_error()
                let n = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
                if n > 0 {
                    plaintext.append(contentsOf: chunk[0..<Int(n)])
                    continue
                }
                stop = SSL_get_error(ssl, n)
                if stop != SSL_ERROR_WANT_READ && stop != SSL_ERROR_ZERO_RETURN {
                    reason = TLSErrors.drain(default: "unexpected TLS error \(stop)")
                }
                break
            }
            flushOutput()  // a key update or session ticket answer
            if !plaintext.isEmpty { onRead?(plaintext) }
            guard !tcp.isClosed else { return }
            switch stop {
            case SSL_ERROR_NONE: continue  // batch full: deliver more if still wanted
            case SSL_ERROR_WANT_READ, SSL_ERROR_ZERO_RETURN:
                if stop == SSL_ERROR_WANT_READ && readingWanted { tcp.resumeReading() }  // input used up: read the socket again
                if stop == SSL_ERROR_ZERO_RETURN {
                    peerSentCloseNotify = true
                    endPending = true
                }
                // Everything before the end is out; the end itself waits while reading is paused.
                if endPending && readingWanted {
                    readEnded = true
                    onEnd?(.fin)
                }
                return
            default:
                readEnded = true
                onEnd?(.error("TLS: \(reason)"))
                tcp.close()
                return
            }
        }
    }

    public func pauseReading() {
        readingWanted = false
        tcp.pauseReading()
    }

    public func resumeReading() {
        readingWanted = true
        // Ciphertext already buffered is decrypted first; the socket is read again once that
        // runs low, so a reader that pauses often never makes the input buffer grow.
        if COpenSSL_BIO_pending(input) <= TLSConnection.inputLowWater { tcp.resumeReading() }
        // Plaintext may already be decrypted or buffered: deliver it on the next iteration,
        // never from inside the caller's own callback.
        guard case .open = state, !drainScheduled, !readEnded, let ssl,
              SSL_pending(ssl) > 0 || COpenSSL_BIO_pending(input) > 0 || endPending else { return }
        drainScheduled = true
        loop.schedule(after: 0) { [weak self] in
            self?.drainScheduled = false
            self?.drainPlaintext()
        }
    }

    private func tcpEnded(_ end: StreamEnd) {
        switch state {
        case .handshaking:
            handshakeFailed(end == .fin ? "the peer closed the connection" : describe(end))
        case .open:
            if end == .fin {
                guard !readEnded, !endPending else { return }  // close_notify came first
                // Plaintext still held (reading paused) goes out first; then `.fin`.
                endPending = true
                drainPlaintext()
                return
            }
            onEnd?(end)
        case .failed:
            break
        }
    }

    private func describe(_ end: StreamEnd) -> String {
        switch end {
        case .fin: return "the peer closed the connection"
        case .reset: return "connection reset by peer"
        case .error(let reason): return reason
        }
    }

    private func tcpClosed() {
        if case .handshaking = state { handshakeFailed("connection closed") }
        if let ssl {
            SSL_free(ssl)  // frees both BIOs
            self.ssl = nil
        }
        dropCallbacksAndReportClose()
    }

    // MARK: Writing

    /// Encrypts `bytes` and queues the records on the socket. `completion` as for TCP
    /// (nil once the ciphertext reached the kernel).
    public func write(_ bytes: [UInt8], completion: ((TransportError?) -> Void)?) {
        guard case .open = state, let ssl, !sentCloseNotify, !tcp.isClosed else {
            let reason = sentCloseNotify ? "already shut down for writing" : "connection closed"
            if let completion { loop.schedule(after: 0) { [remoteAddress] in completion(TransportError("write to \(remoteAddress): \(reason)")) } }
            return
        }
        guard !bytes.isEmpty else {
            if let completion { loop.schedule(after: 0) { completion(nil) } }
            return
        }
        ERR_clear_error()
        // A memory BIO takes everything, so SSL_write encrypts all of it or fails.
        let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(bytes.count) else {
            let reason = TLSErrors.drain(default: "TLS write failed")
            flushOutput()
            completion?(TransportError("write to \(remoteAddress): TLS: \(reason)"))
            return
        }
        flushOutput(completion: completion)
    }

    /// Moves what OpenSSL wrote into the output BIO onto the socket.
    private func flushOutput(completion: ((TransportError?) -> Void)? = nil) {
        let pending = Int(COpenSSL_BIO_pending(output))
        guard pending > 0 else {
            if let completion { loop.schedule(after: 0) { completion(nil) } }
            return
        }
        var bytes = [UInt8](repeating: 0, count: pending)
        let n = bytes.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32(pending)) }
        if n < pending { bytes.removeLast(pending - max(0, Int(n))) }
        tcp.write(bytes, completion: completion)
    }

    // MARK: Ending

    private func sendCloseNotify() {
        guard case .open = state, let ssl, !sentCloseNotify, !tcp.isClosed else { return }
        sentCloseNotify = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        flushOutput()
    }

    /// Sends close_notify, then FIN after the queued writes; keeps reading.
    public func shutdown(completion: ((TransportError?) -> Void)?) {
        sendCloseNotify()
        tcp.shutdown(completion: completion)
    }

    /// Aborts with RST; no close_notify.
    public func reset() { tcp.reset() }

    /// Sends close_notify (best effort) and closes.
    public func close() {
        sendCloseNotify()
        tcp.close()
    }

    /// Sends close_notify and closes once every queued write has reached the kernel.
    public func closeAfterFlush() {
        sendCloseNotify()
        tcp.closeAfterFlush()
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }
}
