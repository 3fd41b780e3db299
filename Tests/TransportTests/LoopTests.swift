import Foundation
import Glibc
import Testing
@testable import Transport

/// Timers, cross-thread wake-ups, signals and shutting a loop down.
@Suite(.serialized)
struct LoopTests {
    @Test func timersFireInDueOrderAndCancelledOnesNever() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        loop.schedule(after: 30_000) { fired.append("30ms"); loop.stop() }
        loop.schedule(after: 10_000) { fired.append("10ms-a") }
        let cancelled = loop.schedule(after: 20_000) { fired.append("cancelled") }
        loop.schedule(after: 10_000) { fired.append("10ms-b") }
        loop.schedule(after: 20_000) { fired.append("20ms") }
        let oneShot = loop.schedule(after: 0) { fired.append("0ms") }
        cancelled.cancel()
        #expect(cancelled.isActive == false)
        #expect(oneShot.isActive)
        runBounded(loop)
        #expect(fired == ["0ms", "10ms-a", "10ms-b", "20ms", "30ms"])
        #expect(oneShot.isActive == false, "a one-shot timer is done after firing")
    }

    @Test func repeatingTimerRunsUntilCancelled() throws {
        let loop = try EventLoop()
        var ticks: [Int64] = []
        var repeating: TimerHandle?
        repeating = loop.scheduleRepeating(every: 2_000) {
            ticks.append(loop.now)
            if ticks.count == 5 {
                repeating?.cancel()
                // One more iteration: a cancelled repeating timer must not tick again.
                loop.schedule(after: 10_000) { loop.stop() }
            }
        }
        runBounded(loop)
        #expect(ticks.count == 5)
        #expect(ticks == ticks.sorted(), "loop.now is monotonic")
        #expect(ticks.allSatisfy { $0 >= 2_000 }, "no tick before its first period")
    }

    @Test func nowIsMonotonicMicrosecondsAndWallClockStartIsNow() throws {
        let loop = try EventLoop()
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let wallNow = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        #expect(abs(wallNow - loop.wallClockStart) < 60_000_000)
        var seen: [Int64] = []
        loop.schedule(after: 5_000) { seen.append(loop.now); loop.stop() }
        runBounded(loop)
        #expect(seen.count == 1)
        #expect(seen[0] >= 5_000, "the timer fired after its delay in loop.now's microseconds")
    }

    @Test func executeFromAnotherThreadRunsInOrderOnTheLoopThread() throws {
        let loop = try EventLoop()
        let remote = loop.remote
        final class Seen { var indices: [Int] = []; var allOnLoopThread = true }
        let seen = LoopBound(Seen(), on: loop)
        onThread {
            for index in 0..<200 {
                remote.execute { loop in
                    seen.value.indices.append(index)
                    seen.value.allOnLoopThread = seen.value.allOnLoopThread && loop.isOnLoopThread
                }
            }
            remote.stop()
        }
        runBounded(loop)
        #expect(seen.value.indices == Array(0..<200))
        #expect(seen.value.allOnLoopThread)
    }

    @Test func signalArrivesOnTheLoop() throws {
        let loop = try EventLoop()
        var signals: [Int32] = []
        let watcher = try loop.onSignal(SIGUSR1) { signal in
            signals.append(signal)
            loop.stop()
        }
        loop.schedule(after: 0) { kill(getpid(), SIGUSR1) }
        runBounded(loop)
        #expect(signals == [SIGUSR1])
        #expect(watcher.signal == SIGUSR1)
    }

    @Test func closingTheLoopClosesEveryOpenHandle() throws {
        let loop = try EventLoop()
        var closed: [String] = []
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.onClose = { closed.append("server side") }
            loop.stop()
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            if case .success(let connection) = result {
                connection.onClose = { closed.append("client side") }
            }
        }
        let repeating = loop.scheduleRepeating(every: 1_000) {}
        let watcher = try loop.onSignal(SIGUSR2) { _ in }
        runBounded(loop)  // closes the loop
        #expect(closed.sorted() == ["client side", "server side"])
        #expect(repeating.isActive == false)
        _ = watcher
    }

    @Test func executeAfterCloseIsDropped() throws {
        let loop = try EventLoop()
        let remote = loop.remote
        loop.schedule(after: 0) { loop.stop() }
        runBounded(loop)
        remote.execute { _ in Issue.record("ran after close") }
        remote.stop()
    }
}

extension LoopTests {
    @Test func twoLoopsOnTwoThreadsTalk() throws {
        // An echo server on its own loop and thread, a client on the test's loop: nothing in
        // the transport is global, so loops can run side by side (one per core later).
        struct ServerLoop: Sendable {
            let port: Int
            let remote: LoopRemote
        }
        let started = Shared<ServerLoop?>(nil)
        let finished = Shared(false)
        onThread {
            guard let loop = try? EventLoop(),
                  let listener = try? TCPListener(loop: loop, port: 0, onAccept: { connection in
                      connection.onRead = { connection.write($0) }
                      connection.onEnd = { _ in connection.closeAfterFlush() }
                  }) else { return }
            started.set(ServerLoop(port: listener.port, remote: loop.remote))
            loop.schedule(after: 10_000_000) { loop.stop() }  // bound, like runBounded
            loop.run()
            loop.close()
            finished.set(true)
        }
        waitUntil { started.get != nil }
        let serverLoop = try #require(started.get, "the server loop thread did not start")
        defer { serverLoop.remote.stop() }

        let loop = try EventLoop()
        let sink = ByteSink()
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: serverLoop.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.onRead = { sink.bytes += $0 }
            connection.onEnd = { end in sink.ends.append(end); connection.close(); loop.stop() }
            connection.write(Array("across loops".utf8))
            connection.shutdown()
        }
        runBounded(loop)
        #expect(sink.bytes == Array("across loops".utf8))
        #expect(sink.ends == [.fin])
        serverLoop.remote.stop()
        waitUntil { finished.get }
        #expect(finished.get, "the server loop stopped through its remote and closed")
    }
}

extension LoopTests {
    @Test func closedLoopsGiveBackTheirFileDescriptors() throws {
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }
        // Other suites run in parallel and open sockets too, so compare a loop that opened
        // 20 connections against itself: what it opened must be gone after close, within
        // the noise of a few descriptors from elsewhere.
        let before = openDescriptors()
        for _ in 0..<10 {
            let loop = try EventLoop()
            var accepted = 0
            let listener = try TCPListener(loop: loop, port: 0) { _ in
                accepted += 1
                if accepted == 10 { loop.stop() }
            }
            for _ in 0..<10 {
                TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { _ in }
            }
            runBounded(loop)  // closes everything still open: 20 sockets, listener, timers
        }
        let after = openDescriptors()
        #expect(before > 0)
        #expect(after - before < 20, "10 loops x (20 sockets + listener + epoll + eventfd) would leak ~230")
    }
}
