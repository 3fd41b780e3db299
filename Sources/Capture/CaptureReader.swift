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

    /// Opens `path` ("-" for standard input), plain or compressed (zstd, gzip: detected
    /// from the first bytes).
    public init(path: String, chunkSize: Int = 64 * 1024, maxLineLength: Int = 100 * 1024 * 1024) throws(CaptureError) {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError(file: path, line: 0, offset: 0, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        let source = try Self.byteSource(file: path, fd: fd, ownsDescriptor: path != "-")
        self = try CaptureReader(file: path, lines: LineReader(source: source, chunkSize: chunkSize, maxLineLength: maxLineLength))
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
    public init(file: String, lines: LineReader) throws(CaptureError) {
        self.file = file
        self.lines = lines
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
        let bytes: [UInt8]
        switch line {
        case .complete(let b), .unterminated(let b): bytes = b
        }
        let record: CaptureRecord
        do {
            record = try RecordCoding.decode(bytes)
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
        while true {
            let offset = lines.consumed
            guard let line = try nextLine() else {
                noteEnd()
                return nil
            }
            switch line {
            case .complete(let bytes):
                if bytes.isEmpty || bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                do {
                    return try decodeRecord(bytes)
                } catch let error where error.unknownType != nil {
                    let type = error.unknownType ?? ""
                    if skippedTypes.count < 16, skippedTypes.insert(type).inserted {
                        warnings.append("\(file):\(lineNumber): record type \"\(type)\" is not one this version reads (\(RecordCoding.recordTypes.joined(separator: ", "))): skipped")
                    }
                    continue
                } catch {
                    throw CaptureError(file: file, line: lineNumber, offset: offset, message: error.message)
                }
            case .unterminated(let bytes):
                do {
                    return try decodeRecord(bytes)
                } catch {
                    noteEnd()
                    warnings.append("\(file):\(lineNumber): torn last line (\(bytes.count) bytes without a newline, not a complete record): ignored; the writer probably stopped mid-write")
                    return nil
                }
            }
        }
    }

    /// The direct decoder handles the common lines; anything it is not sure of (and every
    /// bad line) goes through the tree-based decoder, which owns the error messages.
    private mutating func decodeRecord(_ bytes: [UInt8]) throws(RecordDecodingError) -> CaptureRecord {
        if let record = bytes.withUnsafeBufferPointer({ DirectRecordDecoder.decode($0) }) {
            directlyDecoded += 1
            return record
        }
        treeDecoded += 1
        let record = try RecordCoding.decode(bytes)
        if case .header = record { throw RecordDecodingError("a second header record (a header belongs on line 1 only)") }
        return record
    }

    /// A compressed input cut short says so once, at its end.
    private mutating func noteEnd() {
        guard !endNoted else { return }
        endNoted = true
        if let warning = lines.source.endWarning { warnings.append("\(file): \(warning)") }
    }

    private mutating func nextLine() throws(CaptureError) -> LineReader.Line? {
        let offset = lines.consumed
        do {
            let line = try lines.next()
            if line != nil { lineNumber += 1 }
            return line
        } catch let error as LineReader.TooLong {
            throw CaptureError(file: file, line: lineNumber + 1, offset: offset,
                               message: "line longer than \(error.limit) bytes (no newline found); not a capture line")
        } catch let error as DecompressionError {
            throw CaptureError(file: file, line: lineNumber + 1, offset: offset, message: error.description)
        } catch let error as LineReader.ReadFailure {
            throw CaptureError(file: file, line: lineNumber + 1, offset: offset, message: "read failed: \(error.message)")
        } catch {
            throw CaptureError(file: file, line: lineNumber + 1, offset: offset, message: "\(error)")
        }
    }
}
