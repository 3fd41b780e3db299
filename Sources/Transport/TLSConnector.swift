/// Opens outgoing TLS connections: `TCPConnector`, then a client handshake.
public enum TLSConnector {
    /// Connects to `host:port` and runs the TLS handshake, sending `serverName` (default:
    /// `host`) as SNI and verifying the certificate for it when `context` verifies.
    ///
    /// `completion` runs once on the loop thread with the connection (reading starts when it
    /// returns) or an error naming the peer and the reason: "connect to db:443: connection
    /// refused", "TLS handshake with db:443 failed: certificate verify failed: hostname
    /// mismatch". `timeout` bounds the TCP connect and, separately, the handshake.
    @discardableResult
    public static func connect(loop: EventLoop, host: String, port: Int, context: TLSContext,
                               serverName: String? = nil, timeout: Int64 = 10_000_000,
                               completion: @escaping (Result<TLSConnection, TransportError>) -> Void) -> TLSConnectAttempt {
        let attempt = TLSConnectAttempt(completion: completion)
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        attempt.tcpAttempt = TCPConnector.connect(loop: loop, host: host, port: port, timeout: timeout) { [attempt] result in
            attempt.tcpAttempt = nil
            switch result {
            case .failure(let error):
                attempt.finish(.failure(error))
            case .success(let tcp):
                guard !attempt.isFinished else { tcp.close(); return }
                TLSConnection.client(over: tcp, context: context, serverName: serverName ?? bareHost,
                                     timeout: timeout) { [attempt] result in
                    if case .success(let connection) = result, attempt.isFinished {
                        connection.close()
                    } else {
                        attempt.finish(result)
                    }
                }
            }
        }
        return attempt
    }
}

/// One `TLSConnector.connect` in progress. Cancelling it means its completion never runs
/// (a connection that completes the handshake afterwards is closed).
public final class TLSConnectAttempt {
    fileprivate var tcpAttempt: ConnectAttempt?
    private var completion: ((Result<TLSConnection, TransportError>) -> Void)?

    fileprivate init(completion: @escaping (Result<TLSConnection, TransportError>) -> Void) {
        self.completion = completion
    }

    /// Whether the attempt has finished (or was cancelled).
    public var isFinished: Bool { completion == nil }

    /// Gives up: no completion will run. Idempotent.
    public func cancel() {
        completion = nil
        tcpAttempt?.cancel()
        tcpAttempt = nil
    }

    fileprivate func finish(_ result: Result<TLSConnection, TransportError>) {
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }
}
