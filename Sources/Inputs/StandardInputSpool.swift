import CLI
import Glibc

/// Standard input copied to a temporary file, for a command that reads its input more than
/// once (`replay` reads its capture twice: client keys first, then the selected records).
/// The copy streams in 64 KiB pieces (constant memory); the file is unlinked at once, so it
/// goes away when the process ends, however it ends.
package enum StandardInputSpool {
    /// A path that opens the copied input from its first byte, each time it is opened
    /// (`/proc/self/fd/N` of the unlinked file). Throws `UsageError` when standard input
    /// cannot be read or the copy cannot be written (the message says which).
    package static func spool(command: String) throws -> String {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/faultline-stdin-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw UsageError("\(command): cannot keep standard input in a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        if let failure = InputSources.copyToEnd(from: STDIN_FILENO, to: fd) {
            close(fd)
            throw UsageError(failure.reading
                ? "<stdin>: cannot read: \(failure.reason)"
                : "\(command): cannot keep standard input in a temporary file in \(directory): \(failure.reason)")
        }
        return "/proc/self/fd/\(fd)"
    }
}
