import COpenSSL
import Glibc

/// A certificate and its private key, both PEM text.
public struct TLSIdentity: Sendable, Hashable {
    public var certificatePEM: String
    public var privateKeyPEM: String

    public init(certificatePEM: String, privateKeyPEM: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }
}

/// Makes what a local `wss://` set-up needs, with OpenSSL's APIs (no `openssl` command):
/// a certificate authority, and server certificates it signs for a list of host names and
/// IP addresses. Keys are ECDSA P-256, signatures SHA-256, and the extensions are the ones
/// strict verifiers ask for (Python 3.13's VERIFY_X509_STRICT, browsers): a CA with critical
/// basicConstraints and keyUsage, a server certificate with subjectAltName, serverAuth, and
/// subject and authority key identifiers.
///
/// Time is passed in (`now`, seconds since the Unix epoch) so tests can make certificates
/// that have already expired: `days <= 0` gives one whose validity ended `-days` days ago
/// (and a minute before `now` for 0).
public enum TLSCertificates {
    /// A self-signed CA valid for `days` days from `now` (an hour's slack before, for clocks).
    public static func makeAuthority(commonName: String = "Faultline local CA", days: Int = 3650,
                                     now: Int = Int(time(nil))) throws(TransportError) -> TLSIdentity {
        let key = try newKey()
        defer { EVP_PKEY_free(key) }
        let cert = try newCertificate(subject: commonName, key: key, days: days, now: now)
        defer { X509_free(cert) }
        X509_set_issuer_name(cert, X509_get_subject_name(cert))
        try addExtensions(cert, issuer: cert, [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
        ])
        try sign(cert, with: key)
        return TLSIdentity(certificatePEM: try pem(certificate: cert), privateKeyPEM: try pem(key: key))
    }

    /// A server certificate for `hosts` (DNS names and IPv4/IPv6 addresses, all in
    /// subjectAltName; the first is also the subject's CN), signed by `authority`.
    public static func makeServer(hosts: [String], authority: TLSIdentity, days: Int = 825,
                                  now: Int = Int(time(nil))) throws(TransportError) -> TLSIdentity {
        guard let first = hosts.first else { throw TransportError("certificate: no host names given") }
        for host in hosts where host.isEmpty || host.contains(",") || host.contains(" ") {
            throw TransportError("certificate: '\(host)' is not a host name or IP address")
        }
        let caCert = try readCertificate(authority.certificatePEM)
        defer { X509_free(caCert) }
        let caKey = try readKey(authority.privateKeyPEM)
        defer { EVP_PKEY_free(caKey) }
        let key = try newKey()
        defer { EVP_PKEY_free(key) }
        let cert = try newCertificate(subject: first.utf8.count <= 64 ? first : "faultline", key: key, days: days, now: now)
        defer { X509_free(cert) }
        X509_set_issuer_name(cert, X509_get_subject_name(caCert))
        let names = hosts.map { isIPAddress($0) ? "IP:\($0)" : "DNS:\($0)" }.joined(separator: ",")
        try addExtensions(cert, issuer: caCert, [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_alt_name, names),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
        ])
        try sign(cert, with: caKey)
        return TLSIdentity(certificatePEM: try pem(certificate: cert), privateKeyPEM: try pem(key: key))
    }

    /// Checks that `identity` holds a readable certificate and key (for reusing a CA on disk).
    public static func validate(_ identity: TLSIdentity) throws(TransportError) {
        X509_free(try readCertificate(identity.certificatePEM))
        EVP_PKEY_free(try readKey(identity.privateKeyPEM))
    }

    // MARK: Building blocks

    public static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    private static func newKey() throws(TransportError) -> OpaquePointer {
        ERR_clear_error()
        guard let key = COpenSSL_EVP_EC_gen("P-256") else {
            throw TransportError("certificate: cannot make a key: \(TLSErrors.drain(default: "unknown error"))")
        }
        return key
    }

    /// A version 3 certificate with a random serial, the subject's CN, the public key of
    /// `key`, and the validity described in the type's documentation.
    private static func newCertificate(subject: String, key: OpaquePointer, days: Int, now: Int) throws(TransportError) -> OpaquePointer {
        guard let cert = X509_new() else { throw TransportError("certificate: out of memory") }
        X509_set_version(cert, 2)
        let serial = BN_new()
        BN_rand(serial, 127, -1, 0)  // 127 random bits: positive, under 20 bytes
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert))
        BN_free(serial)
        let (notBefore, notAfter): (Int, Int) = days > 0
            ? (now - 3600, now + days * 86_400)
            : (now + days * 86_400 - 60 - 30 * 86_400, now + days * 86_400 - 60)
        ASN1_TIME_set(X509_getm_notBefore(cert), time_t(notBefore))
        ASN1_TIME_set(X509_getm_notAfter(cert), time_t(notAfter))
        let name = X509_get_subject_name(cert)
        _ = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, subject, -1, -1, 0)
        _ = X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "Faultline", -1, -1, 0)
        X509_set_pubkey(cert, key)
        return cert
    }

    private static func addExtensions(_ cert: OpaquePointer, issuer: OpaquePointer,
                                      _ extensions: [(Int32, String)]) throws(TransportError) {
        let context = UnsafeMutablePointer<X509V3_CTX>.allocate(capacity: 1)
        defer { context.deallocate() }
        memset(context, 0, MemoryLayout<X509V3_CTX>.size)
        COpenSSL_X509V3_set_ctx_nodb(context)
        X509V3_set_ctx(context, issuer, cert, nil, nil, 0)
        for (nid, value) in extensions {
            ERR_clear_error()
            guard let ext = X509V3_EXT_conf_nid(nil, context, nid, value) else {
                throw TransportError("certificate: extension '\(value)': \(TLSErrors.drain(default: "refused"))")
            }
            X509_add_ext(cert, ext, -1)
            X509_EXTENSION_free(ext)
        }
    }

    private static func sign(_ cert: OpaquePointer, with key: OpaquePointer) throws(TransportError) {
        ERR_clear_error()
        guard X509_sign(cert, key, EVP_sha256()) > 0 else {
            throw TransportError("certificate: signing failed: \(TLSErrors.drain(default: "unknown error"))")
        }
    }

    // MARK: PEM

    private static func pem(_ write: (OpaquePointer) -> Int32) throws(TransportError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TransportError("certificate: out of memory") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else {
            throw TransportError("certificate: cannot write PEM: \(TLSErrors.drain(default: "unknown error"))")
        }
        var data: UnsafeMutablePointer<CChar>?
        let count = COpenSSL_BIO_get_mem_data(bio, &data)
        guard let data, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(count)), as: UTF8.self)
    }

    private static func pem(certificate: OpaquePointer) throws(TransportError) -> String {
        try pem { PEM_write_bio_X509($0, certificate) }
    }

    private static func pem(key: OpaquePointer) throws(TransportError) -> String {
        try pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    private static func withBIO<T>(_ text: String, _ body: (OpaquePointer) -> T?) -> T? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw -> T? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    static func readCertificate(_ pem: String) throws(TransportError) -> OpaquePointer {
        ERR_clear_error()
        guard let cert = withBIO(pem, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw TransportError("certificate: not a PEM certificate: \(TLSErrors.drain(default: "unreadable"))")
        }
        return cert
    }

    static func readKey(_ pem: String) throws(TransportError) -> OpaquePointer {
        ERR_clear_error()
        guard let key = withBIO(pem, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw TransportError("certificate: not a PEM private key: \(TLSErrors.drain(default: "unreadable"))")
        }
        return key
    }
}
