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
}
