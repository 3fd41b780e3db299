import Glibc
import Testing
@testable import Transport

/// Runs `loop` on the calling thread until the test calls `loop.stop()`, bounded by a guard
/// timer (default 10 s) so a broken test fails instead of hanging. Returns whether the test
/// stopped the loop itself (false: the guard fired). Closes the loop afterwards.
func runBounded(_ loop: EventLoop, limit: Int64 = 10_000_000,
                sourceLocation: SourceLocation = #_sourceLocation) {
    var timedOut = false
    let guardTimer = loop.schedule(after: limit) {
        timedOut = true
        loop.stop()
    }
    loop.run()
    guardTimer.cancel()
    loop.close()
    #expect(!timedOut, "the loop was stopped by the guard timer, not by the test", sourceLocation: sourceLocation)
}

/// Collects bytes until `count` have arrived.
final class ByteSink {
    var bytes: [UInt8] = []
    var ends: [StreamEnd] = []
}
