import Vocabulary

/// Text from a capture, a pcap or a peer made safe to print on a terminal. Close reasons,
/// event names, header values, notes and error messages are whatever the peer or file
/// said; printed raw, ESC sequences retitle or clear the terminal, BEL rings it, and CR or
/// LF forge whole output lines. Every human-readable output (`frames`, `analyze`'s text
/// report, `proxy --live`, warnings and error messages) passes its text through `escape`.
/// JSON output needs none of this: `JSONWriter.writeString` escapes the same characters
/// (`DisplayUnsafe`) its own way.
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
        DisplayUnsafe.escaped(text, keepingNewlines: keepingNewlines)
    }

    /// Whether `scalar` is one that `escape` rewrites (`DisplayUnsafe`).
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool { DisplayUnsafe.contains(scalar) }
}
