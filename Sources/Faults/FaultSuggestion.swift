/// "Did you mean" for fault rules: `stall-pong` -> `stall-pongs`, `afte=` -> `after=`. The
/// closest known word within an edit distance of 2 (or a third of the word).
enum FaultSuggestion {
    static func hint(_ word: String, _ candidates: [String], format: (String) -> String = { "'\($0)'" }) -> String {
        guard let best = closest(word, candidates) else { return "" }
        return " (did you mean \(format(best))?)"
    }

    static func closest(_ word: String, _ candidates: [String]) -> String? {
        let letters = Array(word)
        let limit = max(2, letters.count / 3)
        // The distance is at least the difference in length: a candidate further off than
        // the limit cannot be suggested, and skipping it keeps a long unknown word (a
        // pasted line, a hostile rule) from costing length x length steps per candidate.
        let best = candidates.lazy.map(Array.init).filter { abs($0.count - letters.count) <= limit }
            .map { (String($0), distance($0, letters)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= limit, best.1 < letters.count else { return nil }
        return best.0
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
