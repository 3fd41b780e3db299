import Testing
import Vocabulary
@testable import Lifecycle

/// A `Transition` keeps its evidence behind one reference (a long capture's report holds
/// tens of thousands of transitions, none of whose evidence it shows), and still compares,
/// hashes and changes by value.
@Suite struct TransitionLayoutTests {
    static let evidence = Evidence(conn: 3, t: 5, from: .server, summary: "close 4009 'Connection terminated'")

    @Test func aTransitionIsNinetySixBytes() {
        #expect(MemoryLayout<Transition>.stride == 96)
    }

    @Test func evidenceComparesAndHashesByValue() {
        let a = Transition(client: "c1", conn: 3, t: 5, from: "connected", to: "failed", cause: "close 4009 from server",
                           evidence: Self.evidence)
        var b = a
        b.evidence = Evidence(conn: 3, t: 5, from: .server, summary: "close 4009 'Connection terminated'")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        b.evidence?.summary = "close 4009"
        #expect(a != b)
        #expect(a.evidence == Self.evidence)
        #expect(b.evidence?.summary == "close 4009")
        b.evidence = nil
        #expect(b.evidence == nil)
        #expect(b != a)
    }
}
