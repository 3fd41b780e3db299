/// The characters that no human-readable output may carry raw, whatever the sink: C0
/// controls and DEL (ESC sequences retitle or clear a terminal, BEL rings it, CR and LF
/// forge lines), C1 controls U+0080 to U+009F (U+009B is a CSI to some terminals), and
/// the invisible characters that change the order or the lines text is shown in: the
/// bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
/// U+202A to U+202E, U+2066 to U+2069) and the line and paragraph separators U+2028 and
/// U+2029. Each sink's one escaping function writes these in its own way: the terminal's
/// `TerminalText.escape` as `\u{HHHH}`, JSON's `JSONWriter.writeString` as `\uHHHH`.
public enum DisplayUnsafe {
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every character of `contains` written as an escape: `\n`, `\r`, `\t`,
    /// `\xHH` for the other C0 controls and DEL, `\u{HHHH}` for the rest. A backslash is
    /// left as it is. Text of printable ASCII only (nearly all) is returned unchanged after
    /// one pass over its bytes. `keepingNewlines` leaves LF as it is. The terminal's one
    /// escaping function (`TerminalText.escape`); messages built below the CLI layer (an
    /// address or header named in an error) use it too.
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard contains(scalar), !(keepingNewlines && scalar == "\n") else { out.append(scalar); continue }
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

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
