/// "Did you mean": the candidate closest to a mistyped word, if it is close enough (an edit
/// distance of at most 2, or a third of the word) to be a typo rather than another word.
public enum Suggestion {
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let best = candidates.map { ($0, ArgumentParser.editDistance($0, word)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, word.count / 3), best.1 < word.count else { return nil }
        return best.0
    }
}
