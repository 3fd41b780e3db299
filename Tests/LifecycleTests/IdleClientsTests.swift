import Testing
import Capture
import Vocabulary
@testable import Lifecycle

/// Which client a new connection of a key joins: the idle one most recently active, the
/// first of equals. `IdleClients` finds it in a heap with stale entries; it must pick what
/// a search of every client of the key picks.
@Suite struct IdleClientsTests {
    /// Random idle, busy and activity changes on 40 clients, checked against the search.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func picksWhatASearchOfEveryClientPicks(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var idle = IdleClients()
        var isIdle = [Bool](repeating: false, count: 40)
        var last = [Micros](repeating: 0, count: 40)
        // Reads the model as it is at each call.
        let current = { (e: IdleClients.Entry) in isIdle[e.client] && last[e.client] == e.lastActivity }
        for _ in 0..<5_000 {
            let client = Int(rng.next() % 40)
            switch rng.next() % 4 {
            case 0 where !isIdle[client]:
                isIdle[client] = true
                idle.becameIdle(.init(lastActivity: last[client], client: client), isCurrent: current)
            case 1 where isIdle[client]:
                // Times repeat on purpose (few values): ties go to the first client.
                let t = Micros(rng.next() % 8)
                guard t != last[client] else { continue }
                last[client] = t
                idle.touched(.init(lastActivity: t, client: client), isCurrent: current)
            case 2:
                var expected: Int?
                for c in 0..<40 where isIdle[c] {
                    if expected.map({ last[c] > last[$0] }) ?? true { expected = c }
                }
                let picked = idle.best(isCurrent: current)
                #expect(picked == expected)
                if let picked {
                    isIdle[picked] = false
                    idle.becameBusy()
                }
            default:
                continue
            }
        }
    }

    /// Overlapping connections of one key are clients of their own; once they end, a new
    /// connection joins the one that ended last, then the next, and equals go to the first.
    @Test func aNewConnectionJoinsTheIdleClientActiveMostRecently() throws {
        var wire = Wire()
        let a = wire.connect(at: 0), b = wire.connect(at: 1), c = wire.connect(at: 2)
        wire.end(b, at: 5, side: .server); wire.end(b, at: 5, side: .client)
        wire.end(a, at: 6, side: .server); wire.end(a, at: 6, side: .client)
        wire.end(c, at: 6, side: .server); wire.end(c, at: 6, side: .client)
        let d = wire.connect(at: 7)
        let e = wire.connect(at: 8)
        let f = wire.connect(at: 9)
        _ = (d, e, f)
        let out = try analyze(wire, end: 10)
        let assigned = out.events.compactMap { if case .connection(let c, let client) = $0 { "\(c)=\(client)" } else { nil } }
        // a and c were last active at 6 s (a is the first of them), b at 5 s.
        #expect(assigned == ["1=client-1", "2=client-2", "3=client-3", "4=client-1", "5=client-3", "6=client-2"])
    }
}
