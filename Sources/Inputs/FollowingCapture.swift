import Capture
import Glibc

/// `faultline frames --follow`: reads a capture that the proxy is still writing. Complete
/// lines are decoded as they arrive; at the end of the file it waits and reads again, until
/// the process is interrupted (the command flushes its output after every record). The
/// descriptor stays open for the life of the process, which this source never outlives.
/// A line is decoded only once its newline is there, so a record caught half-written is
/// never misread. Memory: one read buffer plus the longest line, bounded by `maxLine`.
/// A zstd or gzip capture is followed through a decompressor, which waits at the end of
/// the file like the plain reader (the proxy writes one complete zstd frame per flush).
package struct FollowingCapture: RecordSource {
    package let path: String
    package private(set) var header: CaptureHeader
    package var warnings: [String] { [] }
    private let fd: Int32
    private let source: ByteSource
    private var buffer: [UInt8] = []
    private var lineNumber = 0
    package let pollMicros: UInt32 = 100_000
    package let maxLine = 100 * 1024 * 1024

    package init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError(file: path, line: 0, offset: 0, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        let file = FileByteSource(fd: fd, ownsDescriptor: false)
        var head = try file.peek(CaptureCompression.magicLength)
        while head.count < CaptureCompression.magicLength {
            // The writer has created the file but not yet written its header.
            usleep(pollMicros)
            head = try file.peek(CaptureCompression.magicLength)
        }
        if let compression = CaptureCompression.detect(head) {
            source = try DecompressingByteSource(format: compression, upstream: file)
        } else {
            source = file
        }
        header = CaptureHeader(tool: "", startedAt: 0, source: "")
        guard case .header(let h) = try nextLine(allowHeader: true) else {
            throw CaptureError(file: path, line: 1, offset: 0, message: "not a faultline capture: the first line is not a header (--follow reads captures, not pcaps)")
        }
        header = h
    }

    package mutating func next() throws -> CaptureRecord? { try nextLine(allowHeader: false) }

    private mutating func nextLine(allowHeader: Bool) throws -> CaptureRecord {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<newline]
                defer { buffer.removeSubrange(...newline) }
                lineNumber += 1
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                do {
                    return try RecordCoding.decode(line)
                } catch {
                    throw CaptureError(file: path, line: lineNumber, offset: 0, message: error.message)
                }
            }
            guard buffer.count <= maxLine else {
                throw CaptureError(file: path, line: lineNumber + 1, offset: 0, message: "line longer than \(maxLine) bytes")
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            } catch let error as DecompressionError {
                throw CaptureError(file: path, line: lineNumber + 1, offset: 0, message: error.description)
            } catch let error as LineReader.ReadFailure {
                if errno == EAGAIN { continue }
                throw CaptureError(file: path, line: lineNumber + 1, offset: 0, message: "read failed: \(error.message)")
            }
            if n > 0 {
                buffer.append(contentsOf: chunk[..<n])
            } else {
                usleep(pollMicros)
            }
        }
    }
}
