import Glibc
import Testing
@testable import Transport

/// A writer facing a reader that does not read: the queue grows, nothing is lost, and
/// `onDrain` tells the writer when to go on.
@Suite(.serialized)
struct BackpressureTests {
    static let total = 64 * 1024 * 1024
    static let chunk = 1024 * 1024

    /// Chunk `index` of the stream: a fixed pattern stamped with its index, so the reader can
    /// check order and content with `memcmp` (a per-byte loop is too slow in debug builds).
    static let basePattern: [UInt8] = (0..<chunk).map { UInt8(truncatingIfNeeded: $0 % 251) }
    static func chunk(_ index: Int) -> [UInt8] {
        var bytes = basePattern
        withUnsafeBytes(of: UInt32(index).bigEndian) { bytes.replaceSubrange(0..<4, with: $0) }
        return bytes
    }

    /// Checks bytes arriving at stream offset `position` against the chunks written.
    final class StreamChecker {
        var position = 0
        var matches = true
        private var cached: (index: Int, bytes: [UInt8]) = (-1, [])

        func check(_ bytes: [UInt8]) {
            var i = 0
            while i < bytes.count {
                let index = (position + i) / BackpressureTests.chunk
                let offset = (position + i) % BackpressureTests.chunk
                let n = min(bytes.count - i, BackpressureTests.chunk - offset)
                if cached.index != index { cached = (index, BackpressureTests.chunk(index)) }
                let same = bytes.withUnsafeBytes { got in
                    cached.bytes.withUnsafeBytes { want in
                        memcmp(got.baseAddress! + i, want.baseAddress! + offset, n) == 0
                    }
                }
                matches = matches && same
                i += n
            }
            position += bytes.count
        }
    }

    @Test func queueGrowsWhileThePeerDoesNotReadAndDrainsWhenItDoes() throws {
        let loop = try EventLoop()
        var writer: TCPConnection?
        var queuedAfterWriting = 0
        var queuedWhilePaused = 0
        var drains: [(queued: Int, received: Int)] = []
        let checker = StreamChecker()
        var received: Int { checker.position }

        let listener = try TCPListener(loop: loop, port: 0) { connection in
            writer = connection
            connection.onDrain = { drains.append((connection.writeQueueBytes, received)) }
            var offset = 0
            while offset < Self.total {
                connection.write(Self.chunk(offset / Self.chunk))
                offset += Self.chunk
            }
            queuedAfterWriting = connection.writeQueueBytes
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let reader) = result else { loop.stop(); return }
            reader.pauseReading()  // a peer that does not read
            reader.onRead = { bytes in
                checker.check(bytes)
                if received == Self.total { reader.close(); loop.stop() }
            }
            // Let the loop spin a while with the reader paused: the queue cannot shrink
            // once the kernel buffers are full.
            loop.schedule(after: 100_000) {
                queuedWhilePaused = writer?.writeQueueBytes ?? 0
                reader.resumeReading()
            }
        }
        runBounded(loop, limit: 60_000_000)
        // Kernel socket buffers on loopback hold a few MiB; the rest must be queued by us.
        #expect(queuedAfterWriting > Self.total / 2)
        #expect(queuedWhilePaused > Self.total / 2)
        #expect(received == Self.total)
        #expect(checker.matches)
        #expect(drains.count == 1, "one drain: the queue went above the low-water mark once")
        if let drain = drains.first {
            #expect(drain.queued <= 64 * 1024)
            #expect(drain.received < Self.total, "drain comes while the reader still has bytes to read")
        }
    }

    @Test func relayPatternKeepsTheQueueBounded() throws {
        // source -> relay(a) ... relay(b) -> sink, where the sink reads only after a pause.
        // The relay pauses `a` while `b` is over its high-water mark and resumes on drain, so
        // its queue never grows much past one read plus the mark.
        let loop = try EventLoop()
        let total = 16 * 1024 * 1024
        var maxQueued = 0
        var pauses = 0
        var sinkReceived = 0
        var sinkConnection: TCPConnection?
        var relayOut: TCPConnection?

        let sinkListener = try TCPListener(loop: loop, port: 0) { connection in
            sinkConnection = connection
            connection.pauseReading()
            connection.onRead = { bytes in
                sinkReceived += bytes.count
                if sinkReceived == total { loop.stop() }
            }
            loop.schedule(after: 100_000) { connection.resumeReading() }
        }
        let relayListener = try TCPListener(loop: loop, port: 0) { a in
            a.pauseReading()  // until the outgoing side is connected
            TCPConnector.connect(loop: loop, host: "127.0.0.1", port: sinkListener.port) { result in
                guard case .success(let b) = result else { loop.stop(); return }
                relayOut = b
                b.highWaterMark = 256 * 1024
                a.onRead = { bytes in
                    b.write(bytes)
                    maxQueued = max(maxQueued, b.writeQueueBytes)
                    if b.isOverHighWater { a.pauseReading(); pauses += 1 }
                }
                b.onDrain = { a.resumeReading() }
                a.resumeReading()
            }
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: relayListener.port) { result in
            guard case .success(let source) = result else { loop.stop(); return }
            source.write([UInt8](repeating: 7, count: total))
        }
        runBounded(loop, limit: 60_000_000)
        #expect(sinkReceived == total)
        #expect(pauses > 0, "the slow sink made the relay pause its reader")
        #expect(maxQueued <= 256 * 1024 + loop.readBuffer.count)
        _ = (sinkConnection, relayOut)
    }
}
