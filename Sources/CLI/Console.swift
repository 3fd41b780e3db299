import Glibc
import Vocabulary

/// Writes to standard output and error through write(2): the C globals `stdout` and
/// `stderr` are not usable in Swift 6 mode, and unbuffered writes keep line order between
/// the two streams.
public enum Console {
    public static func out(_ text: String) { write(fd: STDOUT_FILENO, text) }
    public static func err(_ text: String) { write(fd: STDERR_FILENO, text) }

    /// Writes all of `text`, retrying short writes and EINTR. A closed pipe ends quietly.
    public static func write(fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { write(fd: fd, bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `bytes` (already UTF-8, or binary), retrying short writes and EINTR.
    /// A closed pipe ends quietly.
    public static func write(fd: Int32, bytes: UnsafeRawBufferPointer) {
        _ = FileDescriptorOutput.writeAll(fd, bytes)
    }
}

/// Exit statuses fixed by the design: 0 success, 1 findings or a failed run, 2 unusable
/// input or command line.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
}
