import COpenSSL

/// SHA-256 over data that arrives in pieces (OpenSSL's EVP interface): the digest of a large
/// frame passed through without being kept. A class because it owns an EVP_MD_CTX.
public final class SHA256Digest {
    private let context: OpaquePointer?

    public init() {
        context = EVP_MD_CTX_new()
        if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: [UInt8]) {
        guard let context, !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// The digest in lower-case hex (64 characters); call once, at the end.
    public func finish() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        if let context { EVP_DigestFinal_ex(context, &digest, &length) }
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest { out += [hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
