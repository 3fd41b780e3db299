import CLI
import Glibc

/// Standard input copied to a temporary file, for a command that reads its input more than
/// once (`replay` reads its capture twice: client keys first, then the selected records).
/// The copy streams in 64 KiB pieces (constant memory); the file is unlinked at once, so it
/// goes away when the process ends, however it ends.
enum StandardInputSpool {
    /// A path that opens the copied input from its first byte, each time it is opened
    /// (`/proc/self/fd/N` of the unlinked file). Throws `UsageError` when standard input
    /// cannot be read or the copy cannot be written (the message says which).
    static func spool(command: String) throws -> String {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/faultline-stdin-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw UsageError("\(command): cannot keep standard input in a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress!, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 {
                close(fd)
                throw UsageError("<stdin>: cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            var written = 0
            while written < n {
                let w = chunk.withUnsafeBytes { write(fd, $0.baseAddress! + written, n - written) }
                if w < 0, errno == EINTR { continue }
                if w <= 0 {
                    close(fd)
                    throw UsageError("\(command): cannot keep standard input in a temporary file in \(directory): \(String(cString: strerror(errno)))")
                }
                written += w
            }
        }
        return "/proc/self/fd/\(fd)"
    }
}
