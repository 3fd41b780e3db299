import Capture
import Testing
@testable import Lifecycle
import Vocabulary

/// The shard's sweep visits only the clients whose sweep deadline passed (`ClientShard`'s
/// `sweepAfter`). Many clients, most of them quiet for long stretches while others are
/// busy, some with pings never answered: skipping the quiet clients, asleep or awake, must
/// find exactly what visiting every client on every sweep finds, in the same order.
@Suite struct SweepDeadlineTests {
    /// `clients` clients, each one connection with a handshake; each pings at its own time,
    /// a third of them never get the pong; client 0 keeps the record clock moving with
    /// application events all along, so every other client is swept many times while quiet.
    static func staggered(clients: Int) -> Wire {
        var wire = Wire()
        var conns: [ConnectionID] = []
        for client in 0..<clients {
            conns.append(wire.connect(at: Double(client) * 0.1, ip: "10.0.1.\(client + 1)"))
        }
        for (client, conn) in conns.enumerated() {
            let pingAt = 5 + Double(client) * 3.7
            wire.ping(conn, at: pingAt)
            if client % 3 != 1 { wire.pong(conn, at: pingAt + 0.2) }
        }
        var t = 1.0
        while t < 5 + Double(clients) * 3.7 + 40 {
            wire.server(conns[0], at: t, #"{"event":"price","channel":"m","data":"{\"p\":1}"}"#)
            t += 1.5
        }
        wire.records.sort { ($0.time ?? 0) < ($1.time ?? 0) }
        return wire
    }

    static func events(_ wire: Wire, shortcuts: Bool, maxAwake: Int = ClientShard.standardMaxAwake) throws -> [AnalysisEvent] {
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: try SpecLoader.load("bird")), shortcuts: shortcuts,
                                    maxAwake: maxAwake, historyLimit: ClientShard.standardHistoryLimit)
        var events: [AnalysisEvent] = []
        for record in wire.records { events += analyzer.feed(record) }
        return events + analyzer.finish()
    }

    @Test func skippingQuietClientsFindsWhatVisitingEveryClientFinds() throws {
        let wire = Self.staggered(clients: 12)
        let skipping = try Self.events(wire, shortcuts: true)
        #expect(skipping == (try Self.events(wire, shortcuts: false)))
        // The unanswered pings are found, each at its own time, in the clients' order.
        let missing = skipping.compactMap { event -> Finding? in
            if case .finding(let finding) = event, finding.rule == "server.pong-missing" { finding } else { nil }
        }
        #expect(missing.count == 4)
        #expect(missing.map(\.t) == missing.map(\.t).sorted())
    }

    /// The same with clients put to sleep after every step (a sleeping client's deadline is
    /// its `wake`), and with the default sleeping after a short story.
    @Test(arguments: [0, 4])
    func sleepingClientsAreSweptByTheirWakeTime(_ maxAwake: Int) throws {
        let wire = Self.staggered(clients: 12)
        #expect(try Self.events(wire, shortcuts: true, maxAwake: maxAwake) == (try Self.events(wire, shortcuts: false)))
    }
}
