/// How a capture file's bytes are stored. Readers detect it from the first bytes (never the
/// name); the writer chooses it from the name (`.zst`).
public enum CaptureCompression: String, Sendable, CaseIterable {
    /// Zstandard frames (RFC 8878), as written by `faultline proxy --record FILE.zst` and the
    /// `zstd` tool.
    case zstd
    /// gzip members (RFC 1952), as written by the `gzip` tool.
    case gzip

    /// Bytes `detect` needs to decide.
    public static let magicLength = 4

    /// The compression whose magic number `head` starts with; nil for anything else (a plain
    /// capture starts with `{`, a pcap with its own magic).
    public static func detect(_ head: some Collection<UInt8>) -> CaptureCompression? {
        let bytes = Array(head.prefix(magicLength))
        if bytes.count >= 4, bytes[0] == 0x28, bytes[1] == 0xB5, bytes[2] == 0x2F, bytes[3] == 0xFD { return .zstd }
        // A skippable frame (0x184D2A50 to 0x184D2A5F, little-endian) may open a zstd file.
        if bytes.count >= 4, bytes[0] & 0xF0 == 0x50, bytes[1] == 0x2A, bytes[2] == 0x4D, bytes[3] == 0x18 { return .zstd }
        if bytes.count >= 2, bytes[0] == 0x1F, bytes[1] == 0x8B { return .gzip }
        return nil
    }

    /// The compression a capture written to `path` gets: zstd for a name ending in `.zst`,
    /// none otherwise.
    public static func forWriting(_ path: String) -> CaptureCompression? {
        path.hasSuffix(".zst") ? .zstd : nil
    }
}
