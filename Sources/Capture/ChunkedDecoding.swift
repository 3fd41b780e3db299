import Dispatch
import Glibc

/// A run of whole lines of a capture, decoded into records on a worker thread while the
/// reading thread reads on and drains the runs before it. Written by its worker only, until
/// `done` is signalled; read by the reading thread only, after it waited on `done`. (So its
/// state is `@exclusivity(unchecked)`: one thread at a time, ordered by `done`; the run-time
/// access checks of every append and read were 0.7% of the decode workers' samples.)
final class DecodedRun: @unchecked Sendable {
    /// The input's byte offset of the run's first line.
    let offset: Int64
    @exclusivity(unchecked) private var bytes: [UInt8]
    private let done = DispatchSemaphore(value: 0)

    /// The records in line order; the reading thread moves each out (`takeRecord`, leaving
    /// nil) instead of copying it and releasing the run's copy later: a record's references
    /// are then counted on the decoding and the consuming thread only. (Kept in order: the
    /// `reverse()` that let `popLast` move them out copied every record once more.)
    /// (Unchecked exclusivity: one thread at a time, as above, and `takeRecord` runs once
    /// per record on the thread all others wait on.)
    @exclusivity(unchecked) private var records: [CaptureRecord?] = []
    /// The index of the next record `takeRecord` hands out.
    @exclusivity(unchecked) private var nextRecord = 0
    /// Records decoded; `lineIndex[i]` is the 0-based index in the run of record i's line.
    @exclusivity(unchecked) private(set) var recordCount = 0
    @exclusivity(unchecked) private(set) var lineIndex: [Int32] = []
    /// The first line of each record type this version does not read (once per type in
    /// the run), with the number of records before it.
    @exclusivity(unchecked) private(set) var skipped: [(recordsBefore: Int, line: Int, type: String)] = []
    /// The first line that does not decode: decoding stops there, as the reader does.
    @exclusivity(unchecked) private(set) var failure: (line: Int, offset: Int, error: RecordDecodingError)?
    /// Lines in the run (all of them, unless decoding stopped at `failure`).
    @exclusivity(unchecked) private(set) var lineCount = 0
    @exclusivity(unchecked) private(set) var directlyDecoded = 0
    @exclusivity(unchecked) private(set) var treeDecoded = 0

    /// A line longer than this is the reader's `TooLong` error.
    private let maxLineLength: Int
    /// Payloads the analysis is done with: one is freed before each record is decoded, so
    /// that the record's own allocations come from this thread's cache (`SpentPayloads`).
    private let spent: SpentPayloads?
    /// Payloads taken from `spent` at a time (and records decoded between two tries when it
    /// had none: an empty bin is not asked once per record).
    static let spentTake = 128

    /// `bytes` ends with a newline.
    init(bytes: [UInt8], offset: Int64, maxLineLength: Int, spent: SpentPayloads? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.maxLineLength = maxLineLength
        self.spent = spent
    }

    func start(on queue: DispatchQueue) {
        queue.async { [self] in
            decode()
            done.signal()
        }
    }

    /// Waits until the worker has decoded the run.
    func wait() { done.wait() }

    private func decode() {
        var types: Set<String> = []
        var toFree: [[UInt8]] = []
        var untilTake = 0
        bytes.withUnsafeBufferPointer { run in
            guard let base = run.baseAddress else { return }
            var lineStart = 0
            while lineStart < run.count {
                // The run ends with a newline, so every line has one.
                let end = memchr(base + lineStart, 0x0A, run.count - lineStart).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? run.count
                defer {
                    lineCount += 1
                    lineStart = end + 1
                }
                let line = UnsafeBufferPointer(start: base + lineStart, count: end - lineStart)
                guard line.count <= maxLineLength else {
                    failure = (lineCount, lineStart, RecordDecodingError(CaptureReader.tooLongMessage(limit: maxLineLength)))
                    return
                }
                if CaptureReader.isBlank(line) { continue }
                if let spent, toFree.isEmpty {
                    if untilTake > 0 {
                        untilTake -= 1
                    } else {
                        spent.take(upTo: Self.spentTake, into: &toFree)
                        untilTake = toFree.isEmpty ? Self.spentTake : 0
                    }
                }
                if !toFree.isEmpty { _ = toFree.removeLast() }
                do throws(RecordDecodingError) {
                    let (record, direct) = try CaptureReader.decodeRecord(line)
                    if direct { directlyDecoded += 1 } else { treeDecoded += 1 }
                    records.append(record)
                    lineIndex.append(Int32(truncatingIfNeeded: lineCount))
                } catch let error where error.unknownType != nil {
                    let type = error.unknownType ?? ""
                    if types.insert(type).inserted { skipped.append((records.count, lineCount, type)) }
                } catch {
                    failure = (lineCount, lineStart, error)
                    return
                }
            }
        }
        bytes = []
        recordCount = records.count
    }

    /// The next record in line order, moved out of the run (`recordCount` in all).
    func takeRecord() -> CaptureRecord? {
        guard nextRecord < records.count else { return nil }
        nextRecord += 1
        return records[nextRecord - 1].take()
    }
}

/// The reading thread's side of decoding on several threads: it reads runs of whole lines
/// (`LineReader.nextLines`), starts each on the worker queue and hands them back strictly
/// in input order, so the records come out exactly as one thread reads them. At most
/// `window` runs are read ahead: the runs in flight bound the memory, and when the oldest
/// is not decoded yet the reading thread waits for it, never skipping or dropping one.
final class RunPipeline {
    enum Piece {
        /// The next run, decoded.
        case run(DecodedRun)
        /// The bytes after the last newline at end of input (decoded by the reader itself).
        case tail([UInt8], offset: Int64)
        /// Reading failed at `offset`, the start of the first line not handed out.
        case failure(any Error, offset: Int64)
        case end
    }

    private let lines: LineReader
    private let runBytes: Int
    private let window: Int
    private let queue = DispatchQueue(label: "faultline.capture-decoding", attributes: .concurrent)
    /// Runs started, oldest first (at most `window`).
    private var inFlight: [DecodedRun] = []
    /// What follows the last run, once met.
    private var last: Piece?

    private let maxLineLength: Int
    private let spent: SpentPayloads?

    init(lines: LineReader, jobs: Int, runBytes: Int, maxLineLength: Int, spent: SpentPayloads? = nil) {
        self.lines = lines
        self.maxLineLength = maxLineLength
        self.spent = spent
        self.runBytes = max(1, runBytes)
        window = 2 * max(1, jobs)
    }

    /// The next piece in input order; after the tail, `.end`; `.end` (or the failure)
    /// again once met.
    func next() -> Piece {
        topUp()
        guard !inFlight.isEmpty else {
            let piece = last ?? .end
            if case .tail = piece { last = .end }
            return piece
        }
        let run = inFlight.removeFirst()
        run.wait()
        return .run(run)
    }

    private func topUp() {
        while last == nil, inFlight.count < window {
            let offset = lines.consumed
            do {
                switch try lines.nextLines(target: runBytes) {
                case .complete(let bytes):
                    let run = DecodedRun(bytes: bytes, offset: offset, maxLineLength: maxLineLength, spent: spent)
                    run.start(on: queue)
                    inFlight.append(run)
                case .unterminated(let bytes):
                    last = .tail(bytes, offset: offset)
                case nil:
                    last = .end
                }
            } catch {
                last = .failure(error, offset: offset)
            }
        }
    }
}
