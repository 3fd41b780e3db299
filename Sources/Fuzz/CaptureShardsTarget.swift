import Capture

extension FuzzTarget {
    /// The input read as a capture twice, decoding on the reading thread and on three
    /// decode workers (`RunPipeline`: runs of whole lines handed out, decoded apart, their
    /// records handed back in order), with sizes small enough that inputs cross them: runs
    /// of 256 bytes, lines of at most 4 KB, 512-byte reads arriving in pieces. The records,
    /// the line number after each, the warnings and the final error must be the same. An
    /// input that does not start with a header gets one, so the fuzzer spends its time
    /// past the header check, where the two paths differ.
    static let captureShards = FuzzTarget(
        name: "capture-shards",
        summary: "capture from memory decoded on 1 thread and on 3 decode workers: records, line numbers, warnings and errors must be equal") { input in
        var bytes = Array(input)
        if !bytes.starts(with: #"{"type":"header""#.utf8) {
            bytes = RecordCoding.encode(.header(CaptureHeader(tool: "fuzz", startedAt: 0, source: "fuzz"))) + bytes
        }
        let seed = bytes.last ?? 0
        func read(jobs: Int) -> ParallelRead<NumberedRecord>? {
            let lines = LineReader(source: MemoryByteSource(bytes, seed: seed &+ UInt8(jobs)), chunkSize: 512, maxLineLength: 4096)
            guard var reader = try? CaptureReader(file: "fuzz.jsonl", lines: lines, decodeJobs: jobs, decodeRunBytes: 256) else {
                return nil
            }
            var records: [NumberedRecord] = []
            var failure: String?
            do {
                while let record = try reader.nextRecord() { records.append(NumberedRecord(record: record, line: reader.lineNumber)) }
            } catch {
                failure = "\(error)"
            }
            return ParallelRead(records: records, warnings: reader.warnings, error: failure)
        }
        ParallelRead.requireSame(serial: read(jobs: 1), parallel: read(jobs: 3))
    }
}

/// A record with the line number the reader gave after it.
private struct NumberedRecord: Equatable {
    var record: CaptureRecord
    var line: Int
}

/// Bytes held in memory, read in pieces of 1 to 511 bytes whose sizes follow `seed`: the
/// line reader sees lines split across reads at every place the fuzzer finds.
final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private var seed: UInt8

    init(_ bytes: [UInt8], seed: UInt8) {
        self.bytes = bytes
        self.seed = seed
    }

    var endWarning: String? { nil }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        seed = seed &* 37 &+ 11
        let n = min(buffer.count, bytes.count - offset, Int(seed) * 2 + 1)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
