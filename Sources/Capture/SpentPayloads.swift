import Synchronization

/// Frame payloads the analysis's shard workers are done with, on their way back to the
/// threads that decode a capture's runs of lines (`DecodedRun`), which free one before
/// decoding each record.
///
/// Why: the process keeps one malloc arena (`main.swift`), and with `--jobs 2` a payload was
/// allocated on a decode worker and freed on a shard worker, so the decode workers' thread
/// caches (glibc's tcache) were always empty and the shard workers' always full: each such
/// `malloc` and `free` locked the one arena, and the threads slept on its lock thousands of
/// times a run (the payload's free on the shard workers was 45% of those sleeps, perf's
/// context-switch samples, "Every core, seventh round" in docs/benchmarks.md). Freed on the
/// decoding thread just before it allocates the next record's, a payload's memory goes
/// through that thread's own cache without the lock, in the one arena.
///
/// Bounded: at most `limit` payloads are held; a shard worker whose hand-back does not fit
/// frees the rest itself (the counter `refused` says how many), as before this existed.
/// Nothing is lost either way: these are buffers no step refers to any more.
public final class SpentPayloads: Sendable {
    public let limit: Int
    private let held: Mutex<Held>

    private struct Held {
        var payloads: [[UInt8]] = []
        var refused = 0
    }

    /// 2,048 by default: the decode workers take 128 at a time, and every buffer held is
    /// memory at the run's peak (8,192 held some 1 MiB more with `--jobs 2` at 1 GB).
    public init(limit: Int = 2048) {
        self.limit = max(0, limit)
        held = Mutex(Held())
    }

    /// Takes `payloads`' buffers, as many as fit under the limit, leaving `payloads` empty
    /// (those that did not fit are released here, on the caller's thread).
    public func give(_ payloads: inout [[UInt8]]) {
        guard !payloads.isEmpty else { return }
        let limit = self.limit
        held.withLock { held in
            let room = min(payloads.count, max(0, limit - held.payloads.count))
            held.refused += payloads.count - room
            // Moved, not copied: a copy would count each buffer's references up and down.
            for _ in 0..<room { held.payloads.append(payloads.removeLast()) }
        }
        payloads.removeAll(keepingCapacity: true)
    }

    /// Moves up to `count` held payloads into `into` (for the caller to free).
    func take(upTo count: Int, into: inout [[UInt8]]) {
        guard count > 0 else { return }
        held.withLock { held in
            for _ in 0..<min(count, held.payloads.count) { into.append(held.payloads.removeLast()) }
        }
    }

    /// Payloads held now.
    public var count: Int { held.withLock { $0.payloads.count } }
    /// Payloads handed back that did not fit under the limit, so far.
    public var refused: Int { held.withLock { $0.refused } }
}
