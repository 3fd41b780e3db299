import CLI
import JSON
import Reports
import Vocabulary

extension FuzzTarget {
    /// Every sink's one escaping function fed any text: its output must hold no character
    /// that sink forbids, and JSON must still decode to the text it was given.
    static let sinkEscaping = FuzzTarget(
        name: "sink-escaping",
        summary: "TerminalText.escape, JSONWriter.writeString, escapeXML, RecordLine.safe: no forbidden character out") { input in
        let text = String(decoding: input, as: UTF8.self)

        for escaped in [TerminalText.escape(text), RecordLine.safe(text)] {
            require(!escaped.unicodeScalars.contains(where: DisplayUnsafe.contains), "a display-unsafe character passed the terminal")
        }
        let lines = TerminalText.escape(text, keepingNewlines: true)
        require(!lines.unicodeScalars.contains { $0 != "\n" && DisplayUnsafe.contains($0) }, "keepingNewlines let more than LF through")

        var json: [UInt8] = []
        JSONWriter.writeString(text, into: &json)
        require(!String(decoding: json, as: UTF8.self).unicodeScalars.contains(where: DisplayUnsafe.contains),
                "a display-unsafe character passed into JSON raw")
        require((try? JSONParser.parse(json)) == .string(text), "JSON did not decode to the text it was given")

        let xml = escapeXML(text)
        for scalar in xml.unicodeScalars {
            let forbidden = (DisplayUnsafe.contains(scalar) && scalar != "\n" && scalar != "\r" && scalar != "\t")
                || scalar.value == 0xFFFE || scalar.value == 0xFFFF
            require(!forbidden, "U+\(String(scalar.value, radix: 16)) passed into XML/HTML (XML 1.0 forbids it, or it acts on the display)")
            require(!"<>\"'".unicodeScalars.contains(scalar), "markup character \(scalar) passed into XML")
        }
        // On bytes: a combining mark after "&amp;" joins its ';' into one Character.
        let bytes = Array(xml.utf8)
        let entities = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].map { Array($0.utf8) }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "&") {
            require(entities.contains { bytes[index...].starts(with: $0) }, "a bare & in XML")
        }
    }
}
