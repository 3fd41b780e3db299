/// Relays raw bytes both ways between two connections: the backpressure pattern of
/// `TCPConnection` applied in each direction, and each end carried across (a FIN becomes
/// a half-close of the other side, a reset becomes a reset). For plain TCP forwarding
/// (benchmarks, a pass-through mode); the WebSocket proxy relays frames, not bytes.
///
/// Takes over `onRead`, `onEnd`, `onDrain` and `onClose` of both connections. Lives as
/// long as its connections; `onFinish` runs once both are closed.
public final class TCPRelay {
    public let a: TCPConnection
    public let b: TCPConnection
    /// Bytes copied from `a` to `b` and from `b` to `a`.
    public private(set) var bytesAToB = 0
    public private(set) var bytesBToA = 0
    /// Both connections are closed.
    public var onFinish: (() -> Void)?

    private var finsSeen = 0
    private var closedCount = 0

    public init(_ a: TCPConnection, _ b: TCPConnection) {
        self.a = a
        self.b = b
        wire(from: a, to: b, count: \.bytesAToB)
        wire(from: b, to: a, count: \.bytesBToA)
        a.resumeReading()
        b.resumeReading()
    }

    private func wire(from source: TCPConnection, to sink: TCPConnection,
                      count: ReferenceWritableKeyPath<TCPRelay, Int>) {
        source.onRead = { [unowned sink] bytes in
            self[keyPath: count] += bytes.count
            sink.write(bytes)
            if sink.isOverHighWater { source.pauseReading() }
        }
        sink.onDrain = { [unowned source] in source.resumeReading() }
        source.onEnd = { [unowned sink] end in
            switch end {
            case .fin:
                sink.shutdown()
                self.finsSeen += 1
                if self.finsSeen == 2 {
                    self.a.closeAfterFlush()
                    self.b.closeAfterFlush()
                }
            case .reset, .error:
                sink.reset()  // `source` closes itself after a hard end
            }
        }
        source.onClose = {
            self.closedCount += 1
            if self.closedCount == 2 {
                let finish = self.onFinish
                self.onFinish = nil
                finish?()
            }
        }
    }
}
