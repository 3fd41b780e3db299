import CMalloc

/// glibc's malloc arenas for a pcap read on several threads. The `faultline` binary keeps
/// one arena for the whole process (`main.swift`: per-thread arenas each keep free holes,
/// megabytes of peak memory on a long capture). On a pcap with `--jobs 2` that one arena's
/// lock is taken by every thread at once: segments are allocated on the reading thread and
/// freed on the flow decoders, records allocated on the flow decoders and freed on the
/// analysis's shard workers, so one side's thread cache is always empty and the other's
/// always full, and each of those allocations and frees locks the arena. On the 35 MB pcap
/// that made threads sleep on the lock 5,500-10,700 times per run (perf's context-switch
/// samples, all but a few hundred in `__lll_lock_wait_private` under malloc and free),
/// where `--jobs 1` sleeps about 10 times ("Every core, sixth round" in
/// docs/benchmarks.md).
///
/// So before the flow decoders start, the limit is set to one arena per thread of the run:
/// the reading thread's, a flow decoder and (after them) an analysis's shard worker per
/// job. The process's existing threads keep the arena they have; the limit is the
/// process's and stays set (an arena lives as long as the process). A capture's
/// `--jobs 2` keeps the one arena: there the same change measured no faster and cost 4 MB
/// of peak memory at 150 MB and 28 MB at 1 GB.
enum WorkerArenas {
    /// The arenas a run of `jobs` may use: the reading thread's, and per job a flow decoder
    /// and a shard worker.
    static func limit(jobs: Int) -> Int32 {
        Int32(clamping: 1 + 2 * max(1, jobs))
    }

    /// Sets the process's arena limit for a run of `jobs` (nothing for one job).
    static func allow(jobs: Int) {
        guard jobs > 1 else { return }
        _ = mallopt(M_ARENA_MAX, limit(jobs: jobs))
    }
}
