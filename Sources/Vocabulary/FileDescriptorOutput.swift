import Glibc

/// The write-everything loop over a file descriptor: `write(2)` (or `send(2)`) returns
/// after part of the bytes when a pipe or socket buffer fills, or fails with EINTR when a
/// signal arrives; every writer in Faultline needs the whole buffer out or a reason why not.
public enum FileDescriptorOutput {
    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR. Nil when all went
    /// out; otherwise the `errno` of the failure (EIO for a write that made no progress).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        loop(bytes) { Glibc.write(fd, $0, $1) }
    }

    /// `writeAll` for an array.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// `writeAll` for a slice of an array.
    public static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Int32? {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// `writeAll` through `send(2)` with MSG_NOSIGNAL: a socket whose peer went away fails
    /// with EPIPE instead of raising SIGPIPE.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { buffer in loop(buffer) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) } }
    }

    private static func loop(_ bytes: UnsafeRawBufferPointer, _ call: (UnsafeRawPointer, Int) -> Int) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = call(bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return EIO }
            offset += n
        }
        return nil
    }
}
