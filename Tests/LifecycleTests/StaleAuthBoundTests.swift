import Capture
import Testing
@testable import Lifecycle

/// `channels.stale-auth` keeps at most `ChannelsStaleAuth.maximumKept` auths per client, so
/// its memory stays flat however many connections a client makes; what it forgets is said,
/// as an undetermined check, never passed over in silence.
@Suite struct StaleAuthBoundTests {
    /// `connections` connections, each subscribing `private-a` with its own auth `key:N`,
    /// then, on one more connection, a subscribe reusing `key:reused`.
    func wire(connections: Int, reused: Int) -> Wire {
        var wire = Wire()
        var t = 0.0
        for n in 1...connections {
            let conn = wire.connect(at: t)
            wire.subscribe(conn, at: t + 0.1, "private-a", auth: "key:\(n)")
            wire.end(conn, at: t + 1)
            t += 1.5
        }
        let last = wire.connect(at: t)
        wire.subscribe(last, at: t + 0.1, "private-a", auth: "key:\(reused)")
        return wire
    }

    func undetermined(_ out: Outcome) -> [Undetermined] {
        out.events.compactMap { if case .undetermined(let u) = $0, u.rule == ChannelsStaleAuth.id { u } else { nil } }
    }

    @Test func withinTheBoundNothingIsForgotten() throws {
        let kept = ChannelsStaleAuth.maximumKept
        let out = try analyze(wire(connections: kept, reused: 1), end: Double(kept) * 1.5 + 5)
        #expect(out.findings(ChannelsStaleAuth.id).map(\.message) == ["subscribe private-a reuses the auth sent on connection 1"])
        #expect(undetermined(out).isEmpty)
    }

    @Test func pastTheBoundTheOldestIsForgottenAndTheReportSaysSo() throws {
        let kept = ChannelsStaleAuth.maximumKept
        // Three auths more than the rule keeps forget those of connections 1 to 3; the last
        // subscribe's auth (connection 1's, now unknown) is kept as new, forgetting connection 4's.
        let out = try analyze(wire(connections: kept + 3, reused: 1), end: Double(kept + 3) * 1.5 + 5)
        #expect(out.findings(ChannelsStaleAuth.id).isEmpty)
        let cut = undetermined(out)
        #expect(cut.count == 1)
        #expect(cut.first?.conn == 1)
        #expect(cut.first?.message == "4 auths of earlier subscribes forgotten from connection 1 on (the rule keeps the latest 64 per client): a reuse of one of them was not checked")
    }

    @Test func aRecentAuthIsStillFoundPastTheBound() throws {
        let kept = ChannelsStaleAuth.maximumKept
        // Connection 4's auth is the oldest one still kept.
        let out = try analyze(wire(connections: kept + 3, reused: 4), end: Double(kept + 3) * 1.5 + 5)
        #expect(out.findings(ChannelsStaleAuth.id).map(\.message) == ["subscribe private-a reuses the auth sent on connection 4"])
        #expect(out.findings(ChannelsStaleAuth.id).first?.evidence.first?.summary == "subscribe private-a")
        #expect(undetermined(out).count == 1)
    }
}
