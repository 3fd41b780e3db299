import Vocabulary

/// Text from a capture, a pcap or a peer made safe to print on a terminal. Close reasons,
/// event names, header values, notes and error messages are whatever the peer or file
/// said; printed raw, ESC sequences retitle or clear the terminal, BEL rings it, and CR or
/// LF forge whole output lines. Every human-readable output (`frames`, `analyze`'s text
/// report, `proxy --live`, warnings and error messages) passes its text through `escape`.
/// JSON output needs none of this: its string escaping already covers control characters.
public enum TerminalText {
    /// `text` with every control character written as an escape: `\n`, `\r`, `\t`,
    /// `\xHH` for the other C0 controls and DEL, `\u{HHHH}` for C1 controls (U+0080 to
    /// U+009F: 0x9B is a CSI to some terminals), line and paragraph separators, and the
    /// bidirectional overrides and isolates that make text display in another order than
    /// it is stored. A backslash is left as it is. Text of printable ASCII only (nearly
    /// all) is returned unchanged after one pass over its bytes.
    /// `keepingNewlines` leaves LF as it is, for text made of several lines on purpose
    /// (an error message with the bad rule and a caret under it); every other control
    /// character is still escaped.
    public static func escape(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar), !(keepingNewlines && scalar == "\n") else { out.append(scalar); continue }
            let escaped: String
            switch scalar.value {
            case 0x0A: escaped = "\\n"
            case 0x0D: escaped = "\\r"
            case 0x09: escaped = "\\t"
            case 0..<0x80: escaped = "\\x" + hex(scalar.value, digits: 2)
            default: escaped = "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
            out.append(contentsOf: escaped.unicodeScalars)
        }
        return String(out)
    }

    /// Whether `scalar` is one that `escape` rewrites (`DisplayUnsafe`).
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool { DisplayUnsafe.contains(scalar) }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
