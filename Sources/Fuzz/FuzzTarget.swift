/// One fuzz target: a function that takes any bytes and must neither trap, nor hang, nor
/// break an invariant (a broken invariant is a `fatalError`, which libFuzzer reports as a
/// crash like any other). Targets are listed in `FuzzTarget.all`; one binary holds them
/// all and `FAULTLINE_FUZZ_TARGET` picks one, so one instrumented build serves every target.
struct FuzzTarget: Sendable {
    let name: String
    /// What the target drives, for `--list` and docs/reliability.md.
    let summary: String
    let run: @Sendable (UnsafeRawBufferPointer) -> Void

    static let all: [FuzzTarget] = [
        frameDecoder, httpHead, captureLines, captureShards, captureAnalyzer, pcap, pcapShards, faultRules, specLoader, eventNames, controlRequest,
        proxyRequest,
        export, replayScript,
        toxiproxyAPI,
        sinkEscaping,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// Splits input bytes into pieces whose lengths come from the input itself, so the
/// fuzzer also explores how incremental parsers see their input arrive.
struct InputChunks {
    private var bytes: UnsafeRawBufferPointer
    private var seed: UInt8

    init(_ bytes: UnsafeRawBufferPointer, seed: UInt8) {
        self.bytes = bytes
        self.seed = seed
    }

    mutating func next() -> [UInt8]? {
        guard !bytes.isEmpty else { return nil }
        seed = seed &* 37 &+ 11
        let size = min(bytes.count, Int(seed % 64) + 1)
        defer { bytes = UnsafeRawBufferPointer(rebasing: bytes[size...]) }
        return Array(bytes[..<size])
    }
}

/// Breaks an invariant loudly: libFuzzer saves the input that did it.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

/// What one read of an input gave, for the targets that read it on one thread and on
/// several (`pcap-shards`, `capture-shards`) and require the same: its records (as the
/// target compares them), its warnings and the error that ended it.
struct ParallelRead<Record: Equatable> {
    var records: [Record]
    var warnings: [String]
    var error: String?

    /// Both reads opened or neither did, and where both did, they gave the same.
    static func requireSame(serial: ParallelRead?, parallel: ParallelRead?) {
        require((serial == nil) == (parallel == nil), "one read opened, the other did not")
        guard let serial, let parallel else { return }
        require(serial.records == parallel.records, "records differ: \(serial.records.count) on one thread, \(parallel.records.count) in parallel")
        require(serial.warnings == parallel.warnings, "warnings differ: \(serial.warnings) vs \(parallel.warnings)")
        require(serial.error == parallel.error, "errors differ: \(serial.error ?? "none") vs \(parallel.error ?? "none")")
    }
}
