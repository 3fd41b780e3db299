import Glibc

/// Where TLS secrets go, one NSS key log line each (`CLIENT_RANDOM ...` for TLS 1.2,
/// `CLIENT_HANDSHAKE_TRAFFIC_SECRET ...`, `SERVER_TRAFFIC_SECRET_0 ...` and so on for
/// TLS 1.3), so Wireshark can decrypt a packet capture of the same connections
/// (Preferences > Protocols > TLS > (Pre)-Master-Secret log filename).
///
/// The file is opened for appending (created with mode 0600: it holds secrets) and each
/// line goes out in one `write(2)`, so several contexts, even on several loops, can share
/// one key log without interleaving lines.
public final class TLSKeyLog: Sendable {
    public let path: String
    private let fd: Int32

    /// Opens (or creates) `path` for appending. Throws "key log FILE: <reason>".
    public init(path: String) throws(TransportError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw TransportError("key log \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.fd = fd
    }

    /// Appends one line (the newline is added here).
    public func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    deinit { Glibc.close(fd) }
}
