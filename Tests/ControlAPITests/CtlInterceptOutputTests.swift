import JSON
import Testing
import Vocabulary
@testable import ControlAPI

/// What `ctl intercept` prints: the held messages' payloads are what a peer sent, so a
/// payload of terminal controls is shown escaped on its one row; a long one is cut; a
/// binary one is shown as base64; pauses and overflow counts read as sentences.
@Suite struct CtlInterceptOutputTests {
    static func held(_ id: Int64, _ payload: (String, JSONValue), opcode: Int64 = 1) -> JSONValue {
        .object(JSONObject([("conn", .int(3)), ("id", .int(id)), ("from", "server"), ("opcode", .int(opcode)),
                            ("len", .int(5)), ("held_at_s", .double(1.5)), ("release_at_s", .double(61.5)), payload]))
    }

    @Test func heldPayloadsAreEscapedCutAndLabelled() {
        let hostile = CtlOutputEscapingTests.hostile
        let long = String(repeating: "x", count: 100)
        let body: JSONValue = ["pauses": .array([["conn": .int(3), "from": "server", "match": .string(hostile), "timeout_s": .double(60)]]),
                               "held": .array([Self.held(1, ("text", .string(hostile))), Self.held(2, ("text", .string(long))),
                                               Self.held(3, ("b64", "AAEC"), opcode: 2)]),
                               "overflowed": ["3": .int(7)]]
        let text = CtlInterceptOutput.render("list", .json(200, body))
        #expect(CtlOutputEscapingTests.unsafe(text).isEmpty)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines == [
            "PAUSED        FROM    MATCH" + String(repeating: " ", count: 56) + "TIMEOUT",   // MATCH as wide as the escaped text
            #"connection 3  server  curl\x1b]0;owned\x07\x1b[2J\u{009b}2J\u{202e}\r\nID  forged  60.000s"#,
            "",
            "CONN  ID  FROM    OPCODE  LEN  HELD AT  RELEASED AT  PAYLOAD",
            #"3     1   server  text    5    1.500s   61.500s      curl\x1b]0;owned\x07\x1b[2J\u{009b}2J\u{202e}\r\nID  forged"#,
            "3     2   server  text    5    1.500s   61.500s      " + String(repeating: "x", count: 60) + "…",
            "3     3   server  binary  5    1.500s   61.500s      base64 AAEC",
            "connection 3: 7 matching messages relayed unheld (its hold was full)",
            "",
        ])
    }

    @Test func nothingPausedOrHeld() {
        let text = CtlInterceptOutput.render("list", .json(200, ["pauses": .array([]), "held": .array([]), "overflowed": [:]]))
        #expect(text == "not paused\nno held messages\n")
    }

    @Test func pausesAndDecisionsReadAsSentences() {
        let every: JSONValue = ["paused": ["conn": .null, "from": .null, "match": "sub\u{1B}[2J", "timeout_s": .double(1.5)], "connection": .null]
        #expect(CtlInterceptOutput.render("on", .json(200, every))
                == #"paused every connection (new ones too): holding messages containing 'sub\x1b[2J'; each is forwarded unchanged after 1.5 s undecided"# + "\n")
        #expect(CtlInterceptOutput.render("off", .json(200, ["resumed": true, "connection": .int(4)]))
                == "resumed connection 4: what was held is forwarded\n")
        #expect(CtlInterceptOutput.render("off", .json(200, ["resumed": true, "connection": .null]))
                == "resumed every pause: what was held is forwarded\n")
        let decided: JSONValue = ["connection": .int(4), "id": .int(2), "decision": "edit"]
        #expect(CtlInterceptOutput.render("edit", .json(200, decided)) == "sent the edit of held message 2 of connection 4\n")
        #expect(CtlInterceptOutput.render("drop", .json(200, decided)) == "dropped held message 2 of connection 4\n")
        #expect(CtlInterceptOutput.render("forward", .json(200, decided)) == "forwarded held message 2 of connection 4\n")
    }
}
