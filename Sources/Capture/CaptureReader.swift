import Glibc

/// Reads a capture file (or standard input, "-") as a `RecordSource`, streaming in
/// constant memory. The header is read and checked when the reader is made, so a wrong
/// file fails at once with a message saying what was expected.
///
/// A last line without a newline that does not parse is what a writer killed mid-write
/// leaves behind: it becomes a warning, not an error. Any other bad line is an error
/// naming the file and line, except a record of a type this version does not know (a newer
/// writer's): it is skipped, with one warning for the first line of each such type.
public struct CaptureReader: RecordSource {
    public let file: String
    public private(set) var header: CaptureHeader
    public private(set) var warnings: [String] = []
    /// 1-based number of the last line read.
    public private(set) var lineNumber = 0
    /// Records after the header that the direct decoder took, and those it left to the
    /// tree-based decoder (which decodes them or says why not): proof that the fast path
    /// takes what the writer writes, and a figure for benchmarks.
    public private(set) var directlyDecoded = 0
    public private(set) var treeDecoded = 0

    private var lines: LineReader
    /// Record types skipped so far (bounded: past 16 distinct names, no more warnings).
    private var skippedTypes: Set<String> = []
    private var endNoted = false

    /// Threads decoding the lines after the header: 1 decodes each line on the calling
    /// thread as it is read; more hands runs of about `decodeRunBytes` bytes of whole lines
    /// to worker threads (`RunPipeline`), with the same records, warnings and errors.
    public let decodeJobs: Int
    /// 128 KB by default: the runs in flight (two per decode thread) and their records are
    /// held at once, and halving them was part of bringing `--jobs 2`'s peak at 1 GB under
    /// 64 MiB (`ShardedAnalysis.batchSize`).
    public let decodeRunBytes: Int
    private var pipeline: RunPipeline?
    /// With `decodeJobs` above 1: where a consumer on other threads (the sharded analysis)
    /// hands back the frame payloads it is done with, for the decode workers to free
    /// (`SpentPayloads`).
    public let spentPayloads: SpentPayloads?
    /// The decoded run being handed out: the next record's and warning's index in it, and
    /// the number of lines before it.
    private var draining: DecodedRun?
    private var recordIndex = 0
    private var skipIndex = 0
    private var runFirstLine = 0

    /// Opens `path` ("-" for standard input), plain or compressed (zstd, gzip: detected
    /// from the first bytes).
    public init(path: String, chunkSize: Int = 64 * 1024, maxLineLength: Int = 100 * 1024 * 1024,
                decodeJobs: Int = 1, decodeRunBytes: Int = 128 * 1024) throws(CaptureError) {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError(file: path, line: 0, offset: 0, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        let source = try Self.byteSource(file: path, fd: fd, ownsDescriptor: path != "-")
        self = try CaptureReader(file: path, lines: LineReader(source: source, chunkSize: chunkSize, maxLineLength: maxLineLength),
                                 decodeJobs: decodeJobs, decodeRunBytes: decodeRunBytes)
    }

    /// The bytes of `fd`, through a decompressor when its first bytes are a zstd or gzip
    /// magic number (the peeked bytes are read again).
    public static func byteSource(file: String, fd: Int32, ownsDescriptor: Bool) throws(CaptureError) -> ByteSource {
        let raw = FileByteSource(fd: fd, ownsDescriptor: ownsDescriptor)
        let head: [UInt8]
        do {
            head = try raw.peek(CaptureCompression.magicLength)
        } catch {
            throw CaptureError(file: file, line: 0, offset: 0, message: "cannot read: \((error as? LineReader.ReadFailure)?.message ?? "\(error)")")
        }
        guard let compression = CaptureCompression.detect(head) else { return raw }
        do {
            return try DecompressingByteSource(format: compression, upstream: raw)
        } catch {
            throw CaptureError(file: file, line: 0, offset: 0, message: error.description)
        }
    }

    /// Reads from lines already set up (standard input after a peek, a test's pipe).
    /// `file` is the name used in messages.
    public init(file: String, lines: LineReader, decodeJobs: Int = 1, decodeRunBytes: Int = 128 * 1024) throws(CaptureError) {
        self.file = file
        self.lines = lines
        self.decodeJobs = max(1, decodeJobs)
        self.decodeRunBytes = max(1, decodeRunBytes)
        spentPayloads = decodeJobs > 1 ? SpentPayloads() : nil
        self.header = CaptureHeader(tool: "", startedAt: 0, source: "")
        self.header = try readHeader()
    }

    private mutating func readHeader() throws(CaptureError) -> CaptureHeader {
        let expected = "expected a first line {\"type\":\"header\",\"format\":\"faultline-capture\",\"version\":1,...}"
        guard let line = try nextLine() else {
            if let cut = lines.source.endWarning {
                throw CaptureError(file: file, line: 1, offset: 0, message: "nothing readable before the end: \(cut)")
            }
            throw CaptureError(file: file, line: 1, offset: 0, message: "empty file, \(expected)")
        }
        let record: CaptureRecord
        do {
            record = try RecordCoding.decode(line.bytes)
        } catch {
            throw CaptureError(file: file, line: 1, offset: 0, message: "not a faultline capture: \(error.message); \(expected)")
        }
        guard case .header(let header) = record else {
            throw CaptureError(file: file, line: 1, offset: 0, message: "not a faultline capture: the first line is not a header; \(expected)")
        }
        guard header.version == CaptureHeader.currentVersion else {
            throw CaptureError(file: file, line: 1, offset: 0,
                               message: "unsupported capture version \(header.version) (expected \(CaptureHeader.currentVersion); this file was written by \(header.tool))")
        }
        return header
    }

    public mutating func next() throws -> CaptureRecord? { try nextRecord() }

    /// `next()` with the error type spelled out.
    public mutating func nextRecord() throws(CaptureError) -> CaptureRecord? {
        if decodeJobs > 1 { return try nextDecodedRecord() }
        while true {
            let offset = lines.consumed
            guard let line = try nextLine() else {
                noteEnd()
                return nil
            }
            guard line.terminated else { return lastLine(line.bytes) }
            if Self.isBlank(line.bytes) { continue }
            do {
                return try decodeCounted(line.bytes)
            } catch let error where error.unknownType != nil {
                noteSkipped(error.unknownType ?? "", line: lineNumber)
                continue
            } catch {
                throw CaptureError(file: file, line: lineNumber, offset: offset, message: error.message)
            }
        }
    }

    /// `nextRecord` when runs of lines are decoded on worker threads (`RunPipeline`): the
    /// runs' records, warnings and first bad line, taken in input order, with the line
    /// numbers and byte offsets one thread would give.
    private mutating func nextDecodedRecord() throws(CaptureError) -> CaptureRecord? {
        while true {
            if let run = draining {
                while skipIndex < run.skipped.count, run.skipped[skipIndex].recordsBefore <= recordIndex {
                    let skip = run.skipped[skipIndex]
                    noteSkipped(skip.type, line: runFirstLine + skip.line + 1)
                    skipIndex += 1
                }
                if recordIndex < run.recordCount, let record = run.takeRecord() {
                    lineNumber = runFirstLine + Int(run.lineIndex[recordIndex]) + 1
                    recordIndex += 1
                    return record
                }
                if let failure = run.failure {
                    lineNumber = runFirstLine + failure.line + 1
                    throw CaptureError(file: file, line: lineNumber, offset: run.offset + Int64(failure.offset),
                                       message: failure.error.message)
                }
                lineNumber = runFirstLine + run.lineCount
                draining = nil
            }
            let pipeline = self.pipeline ?? RunPipeline(lines: lines, jobs: decodeJobs, runBytes: decodeRunBytes,
                                                          maxLineLength: lines.maxLineLength, spent: spentPayloads)
            self.pipeline = pipeline
            switch pipeline.next() {
            case .run(let run):
                (draining, recordIndex, skipIndex, runFirstLine) = (run, 0, 0, lineNumber)
                directlyDecoded += run.directlyDecoded
                treeDecoded += run.treeDecoded
            case .tail(let bytes, _):
                lineNumber += 1
                return bytes.withUnsafeBufferPointer { lastLine($0) }
            case .failure(let error, let offset):
                throw readError(error, offset: offset)
            case .end:
                noteEnd()
                return nil
            }
        }
    }

    /// The bytes after the last newline: a record, or else what a writer stopped mid-write
    /// left (a warning, and the end of the records).
    private mutating func lastLine(_ bytes: UnsafeBufferPointer<UInt8>) -> CaptureRecord? {
        if let record = try? decodeCounted(bytes) { return record }
        noteEnd()
        warnings.append("\(file):\(lineNumber): torn last line (\(bytes.count) bytes without a newline, not a complete record): ignored; the writer probably stopped mid-write")
        return nil
    }

    /// A record of a type this version does not read: one warning for the first line of
    /// each type (bounded: past 16 distinct names, no more warnings).
    private mutating func noteSkipped(_ type: String, line: Int) {
        if skippedTypes.count < 16, skippedTypes.insert(type).inserted {
            warnings.append("\(file):\(line): record type \"\(type)\" is not one this version reads (\(RecordCoding.recordTypes.joined(separator: ", "))): skipped")
        }
    }

    private mutating func decodeCounted(_ line: UnsafeBufferPointer<UInt8>) throws(RecordDecodingError) -> CaptureRecord {
        let (record, direct) = try Self.decodeRecord(line)
        if direct { directlyDecoded += 1 } else { treeDecoded += 1 }
        return record
    }

    /// A line with nothing but spaces, tabs and carriage returns: skipped between records.
    static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }
    }

    /// The direct decoder handles the common lines; anything it is not sure of (and every
    /// bad line) goes through the tree-based decoder, which owns the error messages.
    /// `direct` says which one decoded the record.
    static func decodeRecord(_ line: UnsafeBufferPointer<UInt8>) throws(RecordDecodingError) -> (record: CaptureRecord, direct: Bool) {
        if let record = DirectRecordDecoder.decode(line) { return (record, true) }
        let record = try RecordCoding.decode(line)
        if case .header = record { throw RecordDecodingError("a second header record (a header belongs on line 1 only)") }
        return (record, false)
    }

    /// A compressed input cut short says so once, at its end.
    private mutating func noteEnd() {
        guard !endNoted else { return }
        endNoted = true
        if let warning = lines.source.endWarning { warnings.append("\(file): \(warning)") }
    }

    private mutating func nextLine() throws(CaptureError) -> LineReader.View? {
        let offset = lines.consumed
        do {
            let line = try lines.nextView()
            if line != nil { lineNumber += 1 }
            return line
        } catch {
            throw readError(error, offset: offset)
        }
    }

    static func tooLongMessage(limit: Int) -> String {
        "line longer than \(limit) bytes (no newline found); not a capture line"
    }

    /// A failure of the line reader at `offset`, in the line after the last one read.
    private func readError(_ error: any Error, offset: Int64) -> CaptureError {
        let message: String
        switch error {
        case let error as LineReader.TooLong: message = Self.tooLongMessage(limit: error.limit)
        case let error as DecompressionError: message = error.description
        case let error as LineReader.ReadFailure: message = "read failed: \(error.message)"
        default: message = "\(error)"
        }
        return CaptureError(file: file, line: lineNumber + 1, offset: offset, message: message)
    }
}
