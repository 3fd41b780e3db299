/// When a recording moves on to a new capture file (`--rotate SIZE|DURATION`), and what the
/// files are called. Pure: the writer asks `isDue` with its own measurements.
///
/// Parts are numbered from 1, the number going before the capture extensions, four digits
/// or more: `soak.jsonl.zst` is recorded as `soak.0001.jsonl.zst`, `soak.0002.jsonl.zst`,
/// ..., so a shell glob (`soak.*.jsonl.zst`) lists them in order up to part 9999.
public struct CaptureRotation: Sendable, Equatable, CustomStringConvertible {
    public enum Limit: Sendable, Equatable {
        /// Bytes written to the part's file (compressed bytes for a `.zst` capture).
        case size(Int64)
        /// Time since the part's first record.
        case duration(Duration)
    }

    public var limit: Limit

    public init(_ limit: Limit) { self.limit = limit }

    /// The smallest size accepted: smaller parts would be mostly headers.
    public static let minimumSize: Int64 = 64 * 1024
    public static let minimumDuration: Duration = .seconds(1)
    /// What `parse` accepts, for error messages.
    public static let syntax = "a size with a unit (K, M, G: 64K, 100M, 2G; powers of 1024) or a duration with a unit (s, m, h, d: 30s, 10m, 1h)"

    /// `100M`, `2G`, `512K` (also `100MB`, `100MiB`), or `30s`, `10m`, `1h`, `1d`; nil for
    /// anything else, and for sizes under 64K or durations under 1 s.
    public static func parse(_ text: String) -> CaptureRotation? {
        var digits = Substring(text)
        var unit = ""
        while let last = digits.last, last.isLetter {
            unit = String(last) + unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let number = Double(digits), number.isFinite, number > 0 else { return nil }
        let sizes: [String: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024 * 1024]
        let seconds: [String: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var sizeUnit = unit
        for suffix in ["iB", "B"] where sizeUnit.count > suffix.count && sizeUnit.hasSuffix(suffix) {
            sizeUnit.removeLast(suffix.count)
            break
        }
        if let scale = sizes[sizeUnit] {
            let bytes = number * scale
            guard bytes < 1e18, Int64(bytes) >= minimumSize else { return nil }
            return CaptureRotation(.size(Int64(bytes)))
        }
        if let scale = seconds[unit] {
            let total = number * scale
            guard total < 1e9, total >= 1 else { return nil }
            return CaptureRotation(.duration(.milliseconds(Int64((total * 1000).rounded()))))
        }
        return nil
    }

    public var description: String {
        switch limit {
        case .size(let bytes): return "every \(bytes) bytes"
        case .duration(let duration):
            let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            return ms % 1000 == 0 ? "every \(ms / 1000) s" : "every \(Double(ms) / 1000) s"
        }
    }

    /// Whether the part should end before `adding` more bytes are written to it: it has
    /// `partBytes` already, of which `headerBytes` are its header (a part with no records
    /// yet never ends, so no record is ever alone in a part for being large), and began
    /// `partAge` ago.
    public func isDue(partBytes: Int64, headerBytes: Int64, adding: Int, partAge: Duration) -> Bool {
        guard partBytes > headerBytes else { return false }
        switch limit {
        case .size(let limit): return partBytes + Int64(adding) > limit
        case .duration(let limit): return partAge >= limit
        }
    }

    /// Extensions the part number goes before (longest first).
    static let captureExtensions = [".jsonl.zst", ".jsonl.gz", ".jsonl", ".json.zst", ".json", ".zst", ".gz"]

    /// The file name of part `part` (from 1) of a recording asked for as `path`:
    /// `soak.jsonl.zst` -> `soak.0001.jsonl.zst`; a name with no capture extension gets
    /// the number at its end (`soak` -> `soak.0001`).
    public static func partPath(_ path: String, part: Int) -> String {
        let number = String(part)
        let padded = String(repeating: "0", count: max(0, 4 - number.count)) + number
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        for ext in captureExtensions where name.count > ext.count && name.hasSuffix(ext) {
            return String(path.dropLast(ext.count)) + "." + padded + ext
        }
        return path + "." + padded
    }
}
