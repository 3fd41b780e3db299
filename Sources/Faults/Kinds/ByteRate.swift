/// Rates and sizes in fault rules: `64KB/s`, `1.5MB/s`, `512B/s`, `64KiB/s` (KB = 1000
/// bytes, as toxiproxy counts; KiB = 1024) and sizes `4096`, `64KB`, `1MiB`.
enum ByteRate {
    static let units: [(suffix: String, bytes: Double)] = [
        ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
        ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1),
    ]

    /// Bytes for `text` ("64KB", "4096"); nil when it is not a size.
    static func size(_ text: String) -> Double? {
        let unit = units.first { text.hasSuffix($0.suffix) }
        let number = unit.map { String(text.dropLast($0.suffix.count)) } ?? text
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite else { return nil }
        return value * (unit?.bytes ?? 1)
    }

    /// Bytes per second for "64KB/s"; nil when it is not a rate.
    static func rate(_ text: String) -> Double? {
        guard text.hasSuffix("/s"), let bytes = size(String(text.dropLast(2))), text.dropLast(2).last?.isLetter == true
        else { return nil }
        return bytes
    }

    /// "64KB/s"-style spelling for reports.
    static func format(perSecond bytes: Double) -> String {
        if bytes >= 1_000_000, bytes.truncatingRemainder(dividingBy: 1_000_000) == 0 { return "\(Int64(bytes / 1_000_000))MB/s" }
        if bytes >= 1000, bytes.truncatingRemainder(dividingBy: 1000) == 0 { return "\(Int64(bytes / 1000))KB/s" }
        return "\(Int64(bytes))B/s"
    }
}
