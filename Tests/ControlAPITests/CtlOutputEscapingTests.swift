import JSON
import Testing
import Vocabulary
@testable import ControlAPI

/// `ctl connections` shows each client's User-Agent and path as the client sent them:
/// printed raw, `ESC ] 0;… BEL` retitled the operator's terminal, `ESC[2J` and a C1 CSI
/// cleared it. Every table cell, message and JSON line `ctl` prints is escaped.
@Suite struct CtlOutputEscapingTests {
    static let hostile = "curl\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}2J\u{202E}\r\nID  forged"

    static func unsafe(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { $0 != "\n" && DisplayUnsafe.contains($0) }
    }

    @Test func connectionsTableEscapesUserAgentAndPath() {
        let row = JSONValue.object(JSONObject([("id", .int(1)), ("state", "open"), ("path", .string("/app/" + Self.hostile)),
                                               ("user_agent", .string(Self.hostile))]))
        let text = CtlOutput.render("connections", .json(200, ["connections": .array([row])]), json: false)
        #expect(Self.unsafe(text).isEmpty)
        #expect(text.split(separator: "\n").count == 2)   // the header and one row: no forged line
        #expect(text.contains(#"curl\x1b]0;owned\x07\x1b[2J\u{009b}2J\u{202e}\r\nID  forged"#))
    }

    @Test func rulesMetricsAndJSONAreEscaped() {
        let rules = CtlOutput.render("rules", .json(200, ["rules": .array([.object(JSONObject([("id", .int(1)),
                                     ("kind", "close"), ("rule", .string(Self.hostile))]))])]), json: false)
        #expect(Self.unsafe(rules).isEmpty)
        var metrics = ControlResponse(status: 200)
        metrics.body = Array("# HELP x\nx{ua=\"\(Self.hostile)\"} 1\n".utf8)
        #expect(Self.unsafe(CtlOutput.render("metrics", metrics, json: false)).isEmpty)
        var raw = ControlResponse(status: 200)
        raw.body = Array("{\"rules\":[{\"rule\":\"\u{9B}2J\u{202E}\"}]}".utf8)
        let json = CtlOutput.json(raw)
        #expect(json == #"{"rules":[{"rule":"\u009b2J\u202e"}]}"# + "\n")
    }
}
