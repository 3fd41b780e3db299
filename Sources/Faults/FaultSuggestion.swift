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
        var best: (word: String, distance: Int)?
        for candidate in candidates {
            // Ties keep the first candidate, and a later one must beat the best so far.
            let reach = min(limit, (best?.distance ?? limit + 1) - 1)
            if let d = distance(Array(candidate), letters, within: reach) { best = (candidate, d) }
        }
        guard let best, best.distance < letters.count else { return nil }
        return best.word
    }

    /// The edit distance between `a` and `b`, or nil when it exceeds `limit`. Only the
    /// band of cells within `limit` of the diagonal is computed, and a row whose every cell
    /// exceeds the limit ends the search: a long or unrelated word (a pasted line, a
    /// hostile rule) costs a few rows, not length x length steps per candidate.
    static func distance(_ a: [Character], _ b: [Character], within limit: Int) -> Int? {
        guard limit >= 0, abs(a.count - b.count) <= limit else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let beyond = limit + 1
        var previous = (0...b.count).map { min($0, beyond) }
        var current = [Int](repeating: beyond, count: b.count + 1)
        for i in 1...a.count {
            let low = max(1, i - limit), high = min(b.count, i + limit)
            current[0] = min(i, beyond)
            if low > 1 { current[low - 1] = beyond }
            var rowMinimum = current[0]
            for j in low...high {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution, beyond)
                rowMinimum = min(rowMinimum, current[j])
            }
            if high < b.count { current[high + 1] = beyond }
            if rowMinimum > limit { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
