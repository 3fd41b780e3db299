import Capture
import Vocabulary

/// Times in the live lines (`--live`, live findings): seconds since the proxy started, with
/// six decimals so microseconds stay visible ("12.000345"), as `faultline frames` writes them.
enum LiveTime {
    static func seconds(_ t: Micros) -> String {
        let magnitude = t.magnitude
        let fraction = String(magnitude % 1_000_000)
        return (t < 0 ? "-" : "") + "\(magnitude / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
