import CLI
import Testing

/// Control characters from peers and files are escaped in human-readable output (issue
/// 15, item 17): ESC sequences retitled or cleared the terminal, CR and LF forged lines.
@Suite struct TerminalTextTests {
    @Test func controlCharactersAreEscaped() {
        #expect(TerminalText.escape("bye\u{1B}]0;pwned\u{07}\r\nfaultline: all clean") == #"bye\x1b]0;pwned\x07\r\nfaultline: all clean"#)
        #expect(TerminalText.escape("a\tb\u{0}c\u{7F}") == #"a\tb\x00c\x7f"#)
        #expect(TerminalText.escape("csi\u{9B}2J") == #"csi\u{009b}2J"#)
        #expect(TerminalText.escape("evil\u{202E}gnp.exe\u{2028}") == #"evil\u{202e}gnp.exe\u{2028}"#)
    }

    @Test func newlinesCanBeKeptForMultiLineMessages() {
        #expect(TerminalText.escape("rule\n  ^^\u{1B}[2J\r", keepingNewlines: true) == "rule\n  ^^\\x1b[2J\\r")
    }

    @Test func printableTextIsUnchanged() {
        for text in ["", "bird:pong", #"{"event":"a\"b"}"#, "café ✓ 日本", "back\\slash"] {
            #expect(TerminalText.escape(text) == text)
        }
    }
}
