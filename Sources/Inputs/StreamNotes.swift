import CLI
import Capture

/// The warning and error notes of an input (pcap stream errors: an impossible frame
/// length, a hole in the TCP stream, retransmissions that disagree; a proxy's own
/// warnings) as lines for `frames` and `analyze`. Notes say where frames went missing, so
/// they are shown, not dropped; a hostile file can hold millions of them, so only the first
/// `limit` are kept and the rest counted. Text is escaped (`TerminalText`).
package struct StreamNotes {
    package static let limit = 100
    private(set) var shown = 0
    private(set) var omitted = 0

    package init() {}

    /// The line for `note`, or nil for an info note or one past the limit.
    package mutating func take(_ note: NoteRecord) -> String? {
        guard note.level != .info else { return nil }
        guard shown < Self.limit else { omitted += 1; return nil }
        shown += 1
        let conn = note.conn.map { "conn \($0): " } ?? ""
        return TerminalText.escape("\(note.level.rawValue): \(conn)\(note.message)")
    }

    /// "1234 more warnings not shown", once the limit was passed.
    package var omittedLine: String? {
        omitted > 0 ? "\(omitted) more stream warnings and errors not shown (the first \(Self.limit) are)" : nil
    }
}
