import COpenSSL
import Glibc

/// The settings shared by many TLS connections: role, trust, certificate, minimum version
/// and key log. An `SSL_CTX` underneath; make one per role and configuration and reuse it.
///
/// Both roles require TLS 1.2 or newer, refuse renegotiation and compression.
///
/// Thread safety: OpenSSL allows creating connections from one `SSL_CTX` on several threads
/// once it is configured, and nothing here changes it after `init`, hence `@unchecked Sendable`.
public final class TLSContext: @unchecked Sendable {
    public enum Role: Sendable { case client, server }

    public let role: Role
    /// Whether certificates are checked (always for a server context: it asks for none).
    public let verifies: Bool
    let ctx: OpaquePointer
    private let keyLog: TLSKeyLog?

    /// A client context. Peers are verified against `caFile` (PEM, one or more CA
    /// certificates) or, when nil, the system trust store (`/etc/ssl/certs`, via
    /// `SSL_CTX_set_default_verify_paths`). `insecure` turns verification off entirely.
    /// Throws when the CA file cannot be read: "CA file FILE: <OpenSSL's reason>".
    public static func client(caFile: String? = nil, insecure: Bool = false,
                              keyLog: TLSKeyLog? = nil) throws(TransportError) -> TLSContext {
        let context = try TLSContext(role: .client, verifies: !insecure, keyLog: keyLog)
        if insecure {
            SSL_CTX_set_verify(context.ctx, SSL_VERIFY_NONE, nil)
        } else {
            SSL_CTX_set_verify(context.ctx, SSL_VERIFY_PEER, nil)
            if let caFile {
                guard SSL_CTX_load_verify_locations(context.ctx, caFile, nil) == 1 else {
                    throw TransportError("CA file \(caFile): \(TLSErrors.drain(default: "cannot be read"))")
                }
            } else if SSL_CTX_set_default_verify_paths(context.ctx) != 1 {
                throw TransportError("system trust store: \(TLSErrors.drain(default: "cannot be loaded"))")
            }
        }
        return context
    }

    /// A server context presenting `certificateFile` (PEM: the certificate, then any
    /// intermediates) with the private key in `keyFile` (PEM). Throws naming the file and
    /// OpenSSL's reason, or "... does not match" when the key is not the certificate's.
    public static func server(certificateFile: String, keyFile: String,
                              keyLog: TLSKeyLog? = nil) throws(TransportError) -> TLSContext {
        let context = try TLSContext(role: .server, verifies: false, keyLog: keyLog)
        guard SSL_CTX_use_certificate_chain_file(context.ctx, certificateFile) == 1 else {
            throw TransportError("certificate \(certificateFile): \(TLSErrors.drain(default: "cannot be read"))")
        }
        guard SSL_CTX_use_PrivateKey_file(context.ctx, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TransportError("private key \(keyFile): \(TLSErrors.drain(default: "cannot be read"))")
        }
        guard SSL_CTX_check_private_key(context.ctx) == 1 else {
            throw TransportError("private key \(keyFile) does not match certificate \(certificateFile)")
        }
        return context
    }

    init(role: Role, verifies: Bool, keyLog: TLSKeyLog?) throws(TransportError) {
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(role == .client ? TLS_client_method() : TLS_server_method()) else {
            throw TransportError("TLS: cannot create a context: \(TLSErrors.drain(default: "out of memory"))")
        }
        self.role = role
        self.verifies = verifies
        self.ctx = ctx
        self.keyLog = keyLog
        _ = COpenSSL_SSL_CTX_set_min_proto_version(ctx, COpenSSL_TLS1_2_VERSION)
        _ = COpenSSL_SSL_CTX_set_options(ctx, UInt64(COpenSSL_SSL_OP_NO_COMPRESSION) | COpenSSL_SSL_OP_NO_RENEGOTIATION)
        _ = COpenSSL_SSL_CTX_set_mode(ctx, COpenSSL_SSL_MODE_RELEASE_BUFFERS)
        if let keyLog {
            // The callback is a C function pointer: it finds the key log through the context's
            // ex-data slot, which holds an unretained pointer (self keeps `keyLog` alive).
            _ = COpenSSL_SSL_CTX_set_keylog_data(ctx, Unmanaged.passUnretained(keyLog).toOpaque())
            SSL_CTX_set_keylog_callback(ctx) { ssl, line in
                guard let ssl, let line, let data = COpenSSL_SSL_CTX_get_keylog_data(ssl) else { return }
                Unmanaged<TLSKeyLog>.fromOpaque(data).takeUnretainedValue().append(String(cString: line))
            }
        }
    }

    deinit { SSL_CTX_free(ctx) }
}

/// OpenSSL's thread-local error queue, read as a person-readable reason.
enum TLSErrors {
    /// The reason of the oldest queued error ("wrong version number", "no such file"),
    /// clearing the queue; `fallback` when the queue is empty.
    static func drain(default fallback: String) -> String {
        let first = ERR_get_error()
        ERR_clear_error()
        guard first != 0 else { return fallback }
        if let reason = ERR_reason_error_string(first) { return String(cString: reason) }
        var buffer = [UInt8](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.withMemoryRebound(to: CChar.self) { ERR_error_string_n(first, $0.baseAddress, $0.count) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Why a certificate check failed ("unable to get local issuer certificate",
    /// "certificate has expired", "hostname mismatch").
    static func verifyReason(_ result: Int) -> String {
        String(cString: X509_verify_cert_error_string(result))
    }
}
