import COpenSSL
import Glibc

/// TLS interception's certificates: for each host name a client asks for, a server
/// certificate signed by a local CA (the one `faultline cert` makes), minted on first use
/// and cached for the run, with a server `TLSContext` presenting it.
///
/// The context for a `CONNECT` host presents that host's certificate; when the client's
/// SNI names another host, OpenSSL's server-name callback switches the handshake to the
/// SNI name's context, so the certificate always matches what the client checks.
///
/// Loop-bound: every use (and the callback, which runs inside a handshake step) happens on
/// the one event loop thread that owns the proxy.
public final class TLSLeafMinter {
    /// At most this many minted contexts are kept; past it the cache starts over (open
    /// connections keep their own reference, so nothing in use is freed).
    public static let cacheLimit = 4096

    private let authority: TLSIdentity
    private let keyLog: TLSKeyLog?
    private var cache: [String: TLSContext] = [:]
    /// Certificates minted so far (the cache's misses), for tests and the live view.
    public private(set) var minted = 0

    /// Checks that the CA's certificate and key are readable and belong together.
    public init(authority: TLSIdentity, keyLog: TLSKeyLog? = nil) throws(TransportError) {
        let cert = try TLSCertificates.readCertificate(authority.certificatePEM)
        defer { X509_free(cert) }
        let key = try TLSCertificates.readKey(authority.privateKeyPEM)
        defer { EVP_PKEY_free(key) }
        guard X509_check_private_key(cert, key) == 1 else {
            ERR_clear_error()
            throw TransportError("the CA key does not match the CA certificate")
        }
        self.authority = authority
        self.keyLog = keyLog
    }

    /// The server context presenting a certificate for `host` (a DNS name or an IP address).
    public func context(for host: String) throws(TransportError) -> TLSContext {
        let name = host.lowercased()
        if let context = cache[name] { return context }
        let identity = try TLSCertificates.makeServer(hosts: [name], authority: authority, days: 397)
        let context = try TLSContext(role: .server, verifies: false, keyLog: keyLog)
        ERR_clear_error()
        let loaded: Bool = {
            guard let cert = try? TLSCertificates.readCertificate(identity.certificatePEM) else { return false }
            defer { X509_free(cert) }
            guard let key = try? TLSCertificates.readKey(identity.privateKeyPEM) else { return false }
            defer { EVP_PKEY_free(key) }
            return SSL_CTX_use_certificate(context.ctx, cert) == 1 && SSL_CTX_use_PrivateKey(context.ctx, key) == 1
        }()
        guard loaded else { throw TransportError("certificate for \(name): \(TLSErrors.drain(default: "cannot be loaded"))") }
        // The callback finds this minter through its argument: unretained, since the minter
        // outlives every context it made (it owns them through `cache`).
        _ = COpenSSL_SSL_CTX_set_tlsext_servername_arg(context.ctx, Unmanaged.passUnretained(self).toOpaque())
        _ = COpenSSL_SSL_CTX_set_tlsext_servername_callback(context.ctx) { ssl, _, arg in
            guard let ssl, let arg, let raw = SSL_get_servername(ssl, Int32(TLSEXT_NAMETYPE_host_name)) else {
                return COpenSSL_SSL_TLSEXT_ERR_OK
            }
            let minter = Unmanaged<TLSLeafMinter>.fromOpaque(arg).takeUnretainedValue()
            let requested = String(cString: raw).lowercased()
            // A name the minter cannot make a certificate for keeps the CONNECT host's one:
            // the client then refuses the handshake, and says why.
            if let switched = try? minter.context(for: requested), switched.ctx != SSL_get_SSL_CTX(ssl) {
                _ = SSL_set_SSL_CTX(ssl, switched.ctx)
            }
            return COpenSSL_SSL_TLSEXT_ERR_OK
        }
        if cache.count >= Self.cacheLimit { cache.removeAll() }
        cache[name] = context
        minted += 1
        return context
    }
}
