/// The surface a relay needs from a connection, whether plain TCP or TLS: bytes in and out,
/// how the stream ended, backpressure, and the three ways to end it. `TCPConnection` and
/// `TLSConnection` both conform, so the proxy's I/O shell relays either without knowing
/// which (TLS is then invisible above the transport: the relay sees plaintext).
///
/// The semantics are `TCPConnection`'s (see its documentation); `TLSConnection` documents
/// where TLS adds to them (close_notify on `shutdown`, `close` and `closeAfterFlush`).
public protocol ByteStream: AnyObject {
    var loop: EventLoop { get }
    var localAddress: String { get }
    var remoteAddress: String { get }
    var onRead: (([UInt8]) -> Void)? { get set }
    var onEnd: ((StreamEnd) -> Void)? { get set }
    var onDrain: (() -> Void)? { get set }
    var onClose: (() -> Void)? { get set }
    var lowWaterMark: Int { get set }
    var highWaterMark: Int { get set }
    var writeQueueBytes: Int { get }
    var isOverHighWater: Bool { get }
    var isClosed: Bool { get }
    func pauseReading()
    func resumeReading()
    func write(_ bytes: [UInt8], completion: ((TransportError?) -> Void)?)
    func shutdown(completion: ((TransportError?) -> Void)?)
    func reset()
    func close()
    func closeAfterFlush()
}

extension ByteStream {
    public func write(_ bytes: [UInt8]) { write(bytes, completion: nil) }
    public func shutdown() { shutdown(completion: nil) }

    /// The end of a closed connection, TCP and TLS alike: every callback is dropped (none
    /// may run again, and they may hold their owner), then `onClose` is called, once.
    func dropCallbacksAndReportClose() {
        let onClose = self.onClose
        onRead = nil
        onEnd = nil
        onDrain = nil
        self.onClose = nil
        onClose?()
    }
}

extension TCPConnection: ByteStream {}
