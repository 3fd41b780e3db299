/// Opens an outgoing byte stream, TLS or plain: the one place that picks between
/// `TLSConnector` and `TCPConnector` for callers that only need `any ByteStream` (the
/// proxy's upstream leg, replay's client mode).
public enum StreamConnector {
    /// Connects to `host:port`, over TLS with `tls` (a client context) or plain TCP without
    /// it. `completion` runs once on the loop thread, as for the two connectors; the
    /// returned closure cancels the attempt (no completion runs after it).
    @discardableResult
    public static func connect(loop: EventLoop, host: String, port: Int, tls: TLSContext?, timeout: Int64 = 10_000_000,
                               completion: @escaping (Result<any ByteStream, TransportError>) -> Void) -> () -> Void {
        if let tls {
            let attempt = TLSConnector.connect(loop: loop, host: host, port: port, context: tls, timeout: timeout) {
                completion($0.map { $0 as any ByteStream })
            }
            return { attempt.cancel() }
        }
        let attempt = TCPConnector.connect(loop: loop, host: host, port: port, timeout: timeout) {
            completion($0.map { $0 as any ByteStream })
        }
        return { attempt.cancel() }
    }
}
