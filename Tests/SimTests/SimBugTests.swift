import Bird
import JSON
import Sim
import Testing
import WebSocket

/// Each `--bug` switch against the same scenario with and without it: the deviation shows
/// with the bug, not without, and the two runs (same seed) are identical up to the first
/// command the bug changes, which is the one it is about.
@Suite struct SimBugTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var bug: SimBug
        /// Builds and runs the scenario for a client with these settings.
        var scenario: @Sendable (SimClientSettings) -> Loopback
        /// True when the bug's deviation shows in the run.
        var shows: @Sendable (Loopback) -> Bool
        /// The first command that differs between the runs: the buggy run's, or the one the
        /// correct run has and the buggy one leaves out.
        var diverges: @Sendable (SimClientCommand) -> Bool
        var testDescription: String { bug.rawValue }
    }

    static func settings(_ bug: SimBug?) -> SimClientSettings {
        var settings = SimChannelTests.client()
        if let bug { settings.bugs = [bug] }
        return settings
    }

    // MARK: Scenarios

    /// Connects, then the server goes away for good: a long run of refused attempts.
    static let serverGone: @Sendable (SimClientSettings) -> Loopback = { settings in
        var net = Loopback(server: SimChannelTests.server(), clients: [settings])
        net.client(0, .connect)
        net.killServer()
        net.run(for: .s(200))
        return net
    }

    /// Server down for three attempts, back, then down again.
    static let flapping: @Sendable (SimClientSettings) -> Loopback = { settings in
        var net = Loopback(server: SimChannelTests.server(), clients: [settings])
        net.client(0, .connect)
        net.killServer()
        while net.opens(0).count < 4 { net.run(for: .s(1)) }
        net.startServer()
        net.run(for: .s(200))
        net.killServer()
        return net
    }

    static func closedBy(_ code: UInt16) -> @Sendable (SimClientSettings) -> Loopback {
        { settings in
            var net = Loopback(server: SimChannelTests.server(), clients: [settings])
            net.client(0, .connect)
            net.run(for: .s(1))
            net.serverCloses(client: 0, code: code)
            net.run(for: .s(100))
            return net
        }
    }

    /// A quiet connection with a 5 s activity timeout; pongs pass or are swallowed.
    static func quiet(stallPongs: Bool) -> @Sendable (SimClientSettings) -> Loopback {
        { settings in
            var net = Loopback(server: SimChannelTests.server { $0.activityTimeout = 5 }, clients: [settings])
            if stallPongs { net.serverToClient = { BirdMessage.parse($0)?.event != "bird:pong" } }
            net.client(0, .connect)
            net.run(for: .s(60))
            return net
        }
    }

    static let noSocketID: @Sendable (SimClientSettings) -> Loopback = { settings in
        var net = Loopback(server: SimChannelTests.server { $0.omitSocketID = true }, clients: [settings])
        net.client(0, .connect)
        net.run(for: .s(0.5))
        return net
    }

    static let plain: @Sendable (SimClientSettings) -> Loopback = { settings in
        var net = Loopback(server: SimChannelTests.server(), clients: [settings])
        net.client(0, .connect)
        net.run(for: .s(1))
        return net
    }

    static let reconnect: @Sendable (SimClientSettings) -> Loopback = { SimChannelTests.reconnected($0) }

    // MARK: Helpers over a run

    /// (attempt bound, delay) of every backoff, read from the reconnect schedules.
    static func delays(_ net: Loopback) -> [(bound: SimMicros, delay: SimMicros)] {
        var out: [(SimMicros, SimMicros)] = []
        var attempt = 0
        for (time, command) in net.commands[0] {
            if case .stateChanged(_, .connected, _) = command { attempt = 0 }
            if case .openSocket = command { attempt += 1 }
            if case .schedule(.reconnect, let at) = command { out.append((Backoff().bound(attempt: attempt + 1), at - time)) }
        }
        return out
    }

    static func index(_ net: Loopback, _ predicate: (SimClientCommand) -> Bool) -> Int? {
        net.commands[0].firstIndex { predicate($0.command) }
    }

    static func isSend(_ command: SimClientCommand, event: String, socket: SimSocketID? = nil) -> Bool {
        if case .send(let id, let frame) = command { BirdMessage.parse(frame)?.event == event && (socket == nil || id == socket) } else { false }
    }

    static func isLog(_ command: SimClientCommand, _ prefix: String) -> Bool {
        if case .log(let line) = command { line.hasPrefix(prefix) } else { false }
    }

    static let cases: [Case] = [
        Case(bug: .noJitter, scenario: serverGone,
             shows: { net in let d = delays(net); return d.count >= 8 && d.allSatisfy { $0.delay == $0.bound } },
             diverges: { if case .schedule(.reconnect, _) = $0 { true } else { false } }),
        Case(bug: .exceedBackoff, scenario: serverGone,
             shows: { net in delays(net).contains { $0.delay > $0.bound } },
             diverges: { if case .schedule(.reconnect, _) = $0 { true } else { false } }),
        Case(bug: .noBackoffReset, scenario: flapping,
             shows: { net in net.clients[0].lastBackoff!.attempt > 1 },
             diverges: { if case .schedule(.reconnect, _) = $0 { true } else { false } }),
        Case(bug: .slowImmediateRetry, scenario: closedBy(4200),
             shows: { net in net.opens(0)[1].time - net.closes(0)[0].time > .s(0.5) },
             diverges: { if case .schedule(.reconnect, _) = $0 { true } else { false } }),
        Case(bug: .retryAfterRefused, scenario: closedBy(4009),
             shows: { net in net.opens(0).count > 1 },
             diverges: { if case .schedule(.reconnect, _) = $0 { true } else { false } }),
        Case(bug: .noPing, scenario: quiet(stallPongs: false),
             shows: { net in net.sent(0, event: "bird:ping").isEmpty },
             diverges: { if case .schedule(.activity, _) = $0 { true } else { false } }),
        Case(bug: .noStaleClose, scenario: quiet(stallPongs: true),
             shows: { net in net.sent(0, event: "bird:ping").count >= 2 && net.closes(0).isEmpty },
             diverges: { isLog($0, "no pong within") }),
        Case(bug: .wrongStaleCode, scenario: quiet(stallPongs: true),
             shows: { net in net.closes(0).first.map { !(4200...4299).contains($0.code) } ?? false },
             diverges: { if case .close(_, 1000, _) = $0 { true } else { false } }),
        Case(bug: .prematureStaleClose, scenario: quiet(stallPongs: false),
             shows: { net in net.closes(0).contains { $0.code == 4201 } },
             diverges: { if case .cancel(.pong) = $0 { true } else { false } }),
        Case(bug: .ignoreMissingID, scenario: noSocketID,
             shows: { net in net.closes(0).isEmpty && net.clients[0].state == .connected },
             diverges: { if case .stateChanged(_, .connected, _) = $0 { true } else { false } }),
        Case(bug: .earlySubscribe, scenario: plain,
             shows: { net in
                 index(net) { isSend($0, event: "bird:subscribe") }! < index(net) { if case .stateChanged(_, .connected, _) = $0 { true } else { false } }!
             },
             diverges: { isSend($0, event: "bird:subscribe") }),
        Case(bug: .skipResubscribe, scenario: reconnect,
             shows: { net in net.sent(0, event: "bird:subscribe").allSatisfy { $0.socket == 1 } },
             diverges: { isSend($0, event: "bird:signin", socket: 2) }),
        Case(bug: .reuseAuth, scenario: reconnect,
             shows: { net in
                 let auths = SimChannelTests.auths(net, "private-chat")
                 return auths.count == 2 && auths[0] == auths[1] && net.logs(0).contains { $0.hasPrefix("subscription_error on private-chat") }
             },
             diverges: { isSend($0, event: "bird:subscribe", socket: 2) }),
        Case(bug: .badSignature, scenario: plain,
             shows: { net in net.logs(0).contains { $0.hasPrefix("subscription_error on private-chat") } },
             diverges: { isSend($0, event: "bird:subscribe") }),
        Case(bug: .skipSignin, scenario: reconnect,
             shows: { net in net.sent(0, event: "bird:signin").map(\.socket) == [1] },
             diverges: { isSend($0, event: "bird:signin") }),
        Case(bug: .triggerUnsubscribed, scenario: plain,
             shows: { net in
                 index(net) { isSend($0, event: "client-hello") }! < index(net) { isLog($0, "subscribed private-chat") }!
             },
             diverges: { isSend($0, event: "client-hello") }),
    ]

    @Test func everyBugHasACase() {
        #expect(Set(Self.cases.map(\.bug)) == Set(SimBug.allCases))
        #expect(Set(SimBug.allCases.map(\.ruleID)).count == SimBug.allCases.count, "one rule per bug")
    }

    @Test(arguments: cases)
    func bugShowsOnlyWithItsSwitch(_ testCase: Case) throws {
        let correct = testCase.scenario(Self.settings(nil))
        let buggy = testCase.scenario(Self.settings(testCase.bug))
        #expect(!testCase.shows(correct), "the correct client shows \(testCase.bug.rawValue)'s deviation")
        #expect(testCase.shows(buggy), "\(testCase.bug.rawValue) does not show")
        let a = correct.commands[0].map(\.command), b = buggy.commands[0].map(\.command)
        let first = try #require(zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset, "the runs never differ")
        #expect(testCase.diverges(b[first]) || testCase.diverges(a[first]), "first difference: \(b[first]) instead of \(a[first])")
    }
}
