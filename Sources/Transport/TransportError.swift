import CUV

/// A transport failure, worded for a person: what was being done, where, and why.
/// `code` is the libuv error number when there is one, so callers can tell
/// "connection refused" from "timed out" without parsing the text.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var code: Int32?

    public init(_ message: String, code: Int32? = nil) {
        self.message = message
        self.code = code
    }

    public var description: String { message }

    /// `"<action>: <reason>"` for a libuv status, e.g. "connect to localhost:1: connection refused".
    static func uv(_ action: String, _ status: Int32) -> TransportError {
        TransportError("\(action): \(UV.describe(status))", code: status)
    }
}

/// Small helpers over libuv's error numbers and handle memory.
enum UV {
    /// A short, lower-case reason for a libuv status. The common ones get fixed wording
    /// (tests and people match on them); the rest use libuv's own text.
    static func describe(_ status: Int32) -> String {
        switch status {
        case UV_ECONNREFUSED.rawValue: return "connection refused"
        case UV_ETIMEDOUT.rawValue: return "timed out"
        case UV_ECONNRESET.rawValue: return "connection reset by peer"
        case UV_EPIPE.rawValue: return "broken pipe"
        case UV_EOF.rawValue: return "end of file"
        case UV_ECANCELED.rawValue: return "cancelled"
        case UV_EADDRINUSE.rawValue: return "address already in use"
        case UV_EADDRNOTAVAIL.rawValue: return "address not available"
        case UV_EACCES.rawValue: return "permission denied"
        case UV_ENETUNREACH.rawValue: return "network unreachable"
        case UV_EHOSTUNREACH.rawValue: return "host unreachable"
        case UV_EAI_NONAME.rawValue, UV_EAI_NODATA.rawValue: return "no such host"
        case UV_EAI_AGAIN.rawValue: return "temporary failure in name resolution"
        default:
            return String(cString: uv_strerror(status)).lowercased()
        }
    }

    /// A fresh TCP handle with a fixed address and `data` cleared (libuv leaves it
    /// uninitialised, and `EventLoop.close()` reads it).
    static func newTCP(_ loop: EventLoop) -> UnsafeMutablePointer<uv_tcp_t> {
        let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(loop.uvLoop, tcp)  // only fails for bad flags
        tcp.pointee.data = nil
        return tcp
    }

    /// Frees a handle allocated with `UnsafeMutablePointer<T>.allocate` once libuv is done with it.
    static let freeOnClose: uv_close_cb = { handle in
        if let handle { UnsafeMutableRawPointer(handle).deallocate() }
    }
}
