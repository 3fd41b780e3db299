import Capture
import Vocabulary

/// Durations in fault rules: a decimal number and a unit, `250us`, `500ms`, `5s`, `1.5s`,
/// `2m`, `1h`, or a bare number of seconds (`after=5` is `after=5s`), the same syntax as
/// every duration option of the command line (`--duration 5`).
public enum FaultDuration {
    static let units: [(suffix: String, micros: Double)] = [
        ("us", 1), ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000),
    ]

    /// The duration in microseconds, or a message saying what is wrong with `text`.
    public static func parse(_ text: String) -> Result<Micros, FaultDurationError> {
        // Longest suffix first so "ms" is not read as "m" + garbage.
        let unit = units.sorted { $0.suffix.count > $1.suffix.count }.first { text.hasSuffix($0.suffix) }
        guard let unit else {
            // A bare number is seconds, as on the command line.
            if !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) { return parse(text + "s") }
            return .failure(FaultDurationError("duration '\(text)' needs a unit (us, ms, s, m, h), as in 500ms or 5s"))
        }
        let number = text.dropLast(unit.suffix.count)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite
        else {
            return .failure(FaultDurationError("bad duration '\(text)': expected a number then a unit, as in 1.5s"))
        }
        let micros = (value * unit.micros).rounded()
        guard micros <= Double(Int64.max / 2) else { return .failure(FaultDurationError("duration '\(text)' is too long")) }
        return .success(Micros(micros))
    }

    /// "1.5s", "500ms", "2m": the shortest exact spelling, for records and listings.
    public static func format(_ micros: Micros) -> String {
        if micros % 60_000_000 == 0, micros != 0 { return "\(micros / 60_000_000)m" }
        if micros % 1_000_000 == 0 { return "\(micros / 1_000_000)s" }
        if micros % 1_000 == 0 { return "\(micros / 1_000)ms" }
        if micros >= 1_000_000 { return "\(Double(micros) / 1_000_000)s" }
        return "\(micros)us"
    }
}

/// Why a duration could not be read: "duration '5' needs a unit (us, ms, s, m, h) ...".
public struct FaultDurationError: Error, Sendable, Hashable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
