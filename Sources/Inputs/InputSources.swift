import Capture
import CLI
import Foundation
import Glibc
import Pcap
import Vocabulary

/// Opens any input `faultline` reads records from (a capture file, pcap and pcapng),
/// chosen by the file's first bytes, never by its name. Adding an input kind is one entry
/// in `kinds`. A capture compressed with zstd or gzip is read through a decompressor,
/// streaming (see `openCompressed`).
///
/// Standard input ("-") and pipes (`<(command)`, FIFOs) work too: the peeked bytes are put
/// back (by seeking when stdin is a file, otherwise by relaying the input through a new
/// pipe that starts with them), so every opener reads the input from its first byte.
package enum InputSources {
    package struct Kind: Sendable {
        /// What the user would call it, for "expected one of" messages.
        package let name: String
        /// Whether the first bytes of the input (up to `peekSize`) look like this kind.
        package let matches: @Sendable ([UInt8]) -> Bool
        package let open: @Sendable (String, Options) throws -> any RecordSource
    }

    /// Settings some kinds honour: `--filter` (a BPF expression) applies to pcap input only;
    /// `jobs` above 1 decodes a capture's lines (`CaptureReader`) or a pcap file's flows on
    /// that many threads (the same records, in the same order).
    package struct Options: Sendable {
        package var filter: String?
        package var jobs: Int
        package init(filter: String? = nil, jobs: Int = 1) {
            self.filter = filter
            self.jobs = jobs
        }
    }

    package static let peekSize = 512

    package static let kinds: [Kind] = [
        Kind(name: "faultline capture (JSON Lines starting with {\"type\":\"header\",\"format\":\"faultline-capture\",...})",
             matches: isCapture,
             open: { path, options in try CaptureReader(path: path, decodeJobs: options.jobs) }),
        Kind(name: "pcap or pcapng", matches: PcapMagic.matches, open: { path, options in
            try PcapRecordSource(path: path, filter: options.filter, tool: FaultlineVersion.tool, jobs: options.jobs)
        }),
    ]

    /// The records of `path` ("-" for standard input). Throws `UsageError` for input of no
    /// known kind, `CaptureError` (or the kind's own error) for a damaged file.
    package static func open(_ path: String, options: Options = Options()) throws -> any RecordSource {
        let (head, readablePath) = try peek(path)
        if let compression = CaptureCompression.detect(head) {
            return try openCompressed(path, readablePath: readablePath, compression: compression, decodeJobs: options.jobs)
        }
        guard let kind = kinds.first(where: { $0.matches(head) }) else {
            let what = head.isEmpty ? "is empty" : "is not a recognized input"
            let name = path == "-" ? "<stdin>" : path
            throw UsageError("\(name): \(what) (expected one of: \(kinds.map(\.name).joined(separator: "; ")))")
        }
        return try kind.open(readablePath, options)
    }

    /// A compressed input: its decompressed first bytes say what it holds. Only captures
    /// are read this way (libpcap reads its files itself; decompress a pcap first).
    package static func openCompressed(_ path: String, readablePath: String, compression: CaptureCompression,
                                       decodeJobs: Int = 1) throws -> any RecordSource {
        let name = path == "-" ? "<stdin>" : path
        let fd = readablePath == "-" ? STDIN_FILENO : Glibc.open(readablePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError("\(name): cannot open: \(String(cString: strerror(errno)))") }
        let source = try DecompressingByteSource(format: compression, upstream: FileByteSource(fd: fd, ownsDescriptor: fd != STDIN_FILENO))
        let head: [UInt8]
        do {
            head = try readSome(source)
        } catch let error as DecompressionError {
            throw CaptureError(file: path, line: 1, offset: 0, message: error.description)
        } catch let error as LineReader.ReadFailure {
            throw UsageError("\(name): cannot read: \(error.message)")
        }
        if isCapture(head) {
            return try CaptureReader(file: path, lines: LineReader(source: source, prefix: head), decodeJobs: decodeJobs)
        }
        let what = head.isEmpty ? (source.endWarning.map { "is cut short before its first line: \($0)" } ?? "holds nothing")
            : PcapMagic.matches(head) ? "holds a pcap; decompress it first (\(compression == .zstd ? "zstd -d" : "gunzip")): compressed pcaps are not read"
            : "does not hold a faultline capture"
        throw UsageError("\(name): \(compression.rawValue)-compressed input that \(what)")
    }

    /// Up to `peekSize` first bytes of `source`, stopping early once the first line is in.
    private static func readSome(_ source: ByteSource) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: peekSize)
        var count = 0
        while count < peekSize {
            let n = try bytes.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n == 0 { break }
            count += n
            if bytes[0..<count].contains(0x0A) { break }
        }
        return Array(bytes[0..<count])
    }

    /// A capture's first line is its header object, which names the format.
    package static func isCapture(_ head: [UInt8]) -> Bool {
        guard let first = head.firstIndex(where: { ![0x20, 0x09, 0x0D, 0x0A].contains($0) }),
              head[first] == UInt8(ascii: "{") else { return false }
        let needle = Array("\"faultline-capture\"".utf8)
        guard head.count >= needle.count else { return false }
        return (0...(head.count - needle.count)).contains { head[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Up to `peekSize` first bytes of the input, and the path to open it by from its first
    /// byte (the same path, except for a pipe, whose peeked bytes are relayed).
    package static func peek(_ path: String) throws -> (head: [UInt8], path: String) {
        if path == "-" { return (try peekStandardInput(), path) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError("\(path): cannot open: \(String(cString: strerror(errno)))") }
        var st = stat()
        let type = fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : S_IFREG
        if type == S_IFDIR {
            close(fd)
            throw UsageError("\(path): is a directory, not an input file")
        }
        let head: [UInt8]
        do { head = try readSome(fd, path: path) } catch { close(fd); throw error }
        if type == S_IFREG {
            close(fd)
            return (head, path)
        }
        let relayed = try relay(head, thenRestOf: fd)
        return (head, "/dev/fd/\(relayed)")
    }

    private static func readSome(_ fd: Int32, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: peekSize)
        var count = 0
        while count < peekSize {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, peekSize - count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw UsageError("\(path): cannot read: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
            // Enough to decide once the first line is in (a live pipe may not send more soon).
            if bytes[0..<count].contains(0x0A) { break }
        }
        return Array(bytes[0..<count])
    }

    private static func peekStandardInput() throws -> [UInt8] {
        let start = lseek(STDIN_FILENO, 0, SEEK_CUR)
        let head = try readSome(STDIN_FILENO, path: "<stdin>")
        if start >= 0, lseek(STDIN_FILENO, start, SEEK_SET) >= 0 { return head }
        let original = dup(STDIN_FILENO)
        guard original >= 0 else { throw UsageError("<stdin>: cannot re-open standard input: \(String(cString: strerror(errno)))") }
        let relayed = try relay(head, thenRestOf: original)
        guard dup2(relayed, STDIN_FILENO) >= 0 else {
            throw UsageError("<stdin>: cannot re-open standard input: \(String(cString: strerror(errno)))")
        }
        close(relayed)
        return head
    }

    /// A new pipe's read end, yielding `head` and then the rest of `original` (which it
    /// takes over), copied by a detached thread in constant memory.
    private static func relay(_ head: [UInt8], thenRestOf original: Int32) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(original)
            throw UsageError("cannot relay a piped input: \(String(cString: strerror(errno)))")
        }
        signal(SIGPIPE, SIG_IGN)  // the reader may stop early; the relay then just ends
        let writeEnd = ends[1]
        Thread.detachNewThread {
            defer { close(writeEnd); close(original) }
            guard FileDescriptorOutput.writeAll(writeEnd, head) == nil else { return }
            _ = copyToEnd(from: original, to: writeEnd)
        }
        return ends[0]
    }

    /// Why `copyToEnd` stopped early: which side failed, and errno's text.
    package struct CopyFailure: Error {
        package var reading: Bool
        package var reason: String
    }

    /// Copies `source` up to its end into `destination` in 64 KiB pieces (constant memory).
    /// Nil once everything is copied.
    package static func copyToEnd(from source: Int32, to destination: Int32) -> CopyFailure? {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return CopyFailure(reading: true, reason: String(cString: strerror(errno))) }
            if n == 0 { return nil }
            if let failure = FileDescriptorOutput.writeAll(destination, chunk[0..<n]) {
                return CopyFailure(reading: false, reason: String(cString: strerror(failure)))
            }
        }
    }
}
