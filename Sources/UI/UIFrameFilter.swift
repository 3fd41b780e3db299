import Reports
import Vocabulary

/// The frames view's filter, in the words of `faultline frames`' flags: `from:client` or
/// `from:server` (`--from`), `event:NAME` (`--event`: bird:subscribe or subscribe); any
/// other word must occur in the payload (case ignored). All words must match.
package struct UIFrameFilter: Sendable, Equatable {
    package var from: Side?
    package var event: String?
    package var words: [String] = []

    package init(_ text: String) {
        for word in text.split(separator: " ").prefix(16).map({ String($0.prefix(200)) }) {
            if word.hasPrefix("from:"), let side = Side(rawValue: String(word.dropFirst(5))) {
                from = side
            } else if word.hasPrefix("event:") {
                event = String(word.dropFirst(6))
            } else {
                words.append(word.lowercased())
            }
        }
    }

    func matches(_ frame: UIModel.Frame) -> Bool {
        if let from, frame.from != from { return false }
        if let event {
            guard let name = frame.event, FrameSelection.event(name, matches: event) else { return false }
        }
        guard !words.isEmpty else { return true }
        let text = String(decoding: frame.payload, as: UTF8.self).lowercased()
        return words.allSatisfy { text.contains($0) }
    }
}
