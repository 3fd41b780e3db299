import Protocols
import Testing
import WebSocket

/// The upgrade request as detection reads it: path and query split once from the target,
/// exactly as sent, and two pieces of evidence equal when their target and subprotocols are.
struct UpgradeEvidenceTests {
    @Test func pathAndQueryAreTheTargetSplitAtItsFirstQuestionMark() {
        let upgrade = UpgradeEvidence(target: "/app/key?protocol=7&client=js&flag&empty=&x=a=b?c")
        #expect(upgrade.path == "/app/key")
        #expect(upgrade.query.map { "\($0.name)|\($0.value)" } == ["protocol|7", "client|js", "flag|", "empty|", "x|a=b?c"])
        let bare = UpgradeEvidence(target: "/socket/websocket")
        #expect(bare.path == "/socket/websocket" && bare.query.isEmpty)
        let emptyQuery = UpgradeEvidence(target: "/?&&")
        #expect(emptyQuery.path == "/" && emptyQuery.query.isEmpty)
        // Not percent-decoded: the bytes as sent.
        #expect(UpgradeEvidence(target: "/p%3F?a%3D=1").query.first?.name == "a%3D")
        // Beyond ASCII, split by characters: a `&` followed by a combining mark is no `&`.
        let combining = UpgradeEvidence(target: "/caf\u{E9}?a=1&\u{301}b=2&c")
        #expect(combining.path == "/caf\u{E9}")
        #expect(combining.query.map { "\($0.name)|\($0.value)" } == ["a|1&\u{301}b=2", "c|"])
    }

    @Test func equalityAndHashFollowTheTargetAndSubprotocols() {
        let a = UpgradeEvidence(target: "/x?a=1", subprotocols: ["v1"])
        #expect(a == UpgradeEvidence(target: "/x?a=1", subprotocols: ["v1"]))
        #expect(a != UpgradeEvidence(target: "/x?a=2", subprotocols: ["v1"]))
        #expect(a != UpgradeEvidence(target: "/x?a=1", subprotocols: []))
        #expect(Set([a, UpgradeEvidence(target: "/x?a=1", subprotocols: ["v1"])]).count == 1)
        // From the headers: every comma-separated value, trimmed, empty ones left out.
        let fromHeaders = UpgradeEvidence(target: "/x?a=1", headers: [HeaderField("Sec-WebSocket-Protocol", " v1 ,, ")])
        #expect(fromHeaders == a)
    }
}
