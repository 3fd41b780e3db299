import Testing
import Foundation
import JSON
import Capture
import Vocabulary
@testable import Lifecycle

/// `channels.rejoin` on Phoenix V2 messages decoded by the table, with the built-in
/// `phoenix` spec (phoenix.js: `rejoinAfterMs` 1, 2, 5, then 10 s, join timeout 10 s,
/// refused joins retried) and with phoenix-channels-python-client's schedule (equal jitter
/// of 0.5 s doubling, refusals final), both the examples of docs/spec-format.md. Pure:
/// records in, findings out.
@Suite struct ChannelRejoinTests {
    /// The `phoenix` spec with only `channels.rejoin`, and the docs example `rejoin` as its
    /// schedule (`rejoin-stepped` is phoenix.js's, as the built-in spec has it).
    static func spec(rejoin: String = "rejoin-stepped") throws -> LifecycleSpec {
        try spec(schedule: DocExamples.block(rejoin))
    }

    static func spec(schedule: JSONValue) throws -> LifecycleSpec {
        let parsed = try JSONParser.parse(try #require(SpecFiles.embedded("phoenix")))
        var object = try #require(parsed.objectValue)
        object["channels"] = .object(["rejoin": schedule])
        object["rules"] = .array([.string("channels.rejoin")])
        return try SpecLoader.parse(.object(object), file: "test")
    }

    /// phoenix-channels-python-client 0.4.1's defaults: `_channel_rejoin_delay(attempt)` is
    /// equal jitter of min(30, 0.5 * 2^attempt), attempt from 0 (`topic_runtime.py`
    /// `_recover_channel`); its join times out after `join_timeout_s` (10 s); a refused
    /// rejoin loses the topic.
    static let pythonClient = "rejoin-equal"

    /// A Phoenix connection at 0 (connected at its 101) that joins room:lobby at 0.1 and is
    /// answered `ok` at 0.15 (unless `answered` is false).
    static func joined(answered: Bool = true) -> (Wire, ConnectionID) {
        var wire = Wire()
        let conn = wire.connect(at: 0, handshake: false)
        join(&wire, conn, at: 0.1, ref: 1)
        if answered { reply(&wire, conn, at: 0.15, ref: 1) }
        return (wire, conn)
    }

    static func join(_ wire: inout Wire, _ conn: ConnectionID, at t: Double, ref: Int) {
        wire.client(conn, at: t, #"["\#(ref)","\#(ref)","room:lobby","phx_join",{}]"#)
    }

    static func reply(_ wire: inout Wire, _ conn: ConnectionID, at t: Double, ref: Int, status: String = "ok") {
        wire.server(conn, at: t, #"["\#(ref)","\#(ref)","room:lobby","phx_reply",{"status":"\#(status)","response":{}}]"#)
    }

    static func crash(_ wire: inout Wire, _ conn: ConnectionID, at t: Double, ref: Int = 1) {
        wire.server(conn, at: t, #"["\#(ref)","\#(ref)","room:lobby","phx_error",{}]"#)
    }

    static func messages(_ outcome: Outcome) -> [String] { outcome.findings.map(\.message) }

    static func undetermined(_ outcome: Outcome) -> [String] {
        outcome.events.compactMap { if case .undetermined(let u) = $0 { u.message } else { nil } }
    }

    @Test func phoenixJSRejoinsACrashedChannelAfterOneSecondThenAgainAfterTheNextCrash() throws {
        var (wire, conn) = Self.joined()
        Self.crash(&wire, conn, at: 3)
        Self.join(&wire, conn, at: 4.05, ref: 3)
        Self.reply(&wire, conn, at: 4.1, ref: 3)
        // Joined again: the next crash is rejoin 1 again.
        Self.crash(&wire, conn, at: 6, ref: 3)
        Self.join(&wire, conn, at: 6.9, ref: 5)
        Self.reply(&wire, conn, at: 6.95, ref: 5)
        #expect(try analyze(wire, spec: Self.spec(), end: 20).findings.isEmpty)
    }

    @Test func aRejoinSoonerThanTheScheduleIsFound() throws {
        var (wire, conn) = Self.joined()
        Self.crash(&wire, conn, at: 3)
        Self.join(&wire, conn, at: 3.07, ref: 3)
        Self.reply(&wire, conn, at: 3.1, ref: 3)
        let outcome = try analyze(wire, spec: Self.spec(), end: 20)
        #expect(Self.messages(outcome) == ["rejoin of room:lobby 0.07 s after phx_error < lower bound 1.00 s for rejoin 1 (tolerance 0.25 s)"])
        #expect(outcome.findings.first?.evidence.map(\.summary) == ["phx_error room:lobby", "phx_join room:lobby"])
    }

    @Test func aMissingRejoinIsFoundWhenItsWindowCloses() throws {
        var (wire, conn) = Self.joined()
        Self.crash(&wire, conn, at: 3)
        let outcome = try analyze(wire, spec: Self.spec(), end: 20)
        #expect(Self.messages(outcome) == ["no rejoin of room:lobby within 1.25 s of phx_error (rejoin 1: bound 1.00 s + tolerance 0.25 s)"])
        #expect(outcome.findings.first?.t == Wire.us(4.25))
    }

    @Test func aCaptureEndingInsideTheWindowLeavesTheCheckUndetermined() throws {
        var (wire, conn) = Self.joined()
        Self.crash(&wire, conn, at: 3)
        let outcome = try analyze(wire, spec: Self.spec(), end: 3.5)
        #expect(outcome.findings.isEmpty)
        #expect(Self.undetermined(outcome) == ["rejoin of room:lobby after phx_error not seen yet; the capture ended at 3.50 s, before the window closed at 4.25 s"])
    }

    /// The socket's end hands the channel to the rejoin after the reconnect
    /// (`channels.resubscribe`); a leave or the server's close owes nothing.
    @Test func aConnectionEndOrALeaveOwesNoRejoin() throws {
        var (dropped, conn) = Self.joined()
        Self.crash(&dropped, conn, at: 3)
        dropped.end(conn, at: 3.5)
        #expect(try analyze(dropped, spec: Self.spec(), end: 20).findings.isEmpty)
        var (left, leftConn) = Self.joined()
        Self.crash(&left, leftConn, at: 3)
        left.client(leftConn, at: 3.5, #"["1","7","room:lobby","phx_leave",{}]"#)
        #expect(try analyze(left, spec: Self.spec(), end: 20).findings.isEmpty)
    }

    /// A crash seen only because a fault swallowed it never reached the client.
    @Test func aCrashTheClientNeverReceivedOwesNothing() throws {
        var (wire, conn) = Self.joined()
        wire.server(conn, at: 3, #"["1","1","room:lobby","phx_error",{}]"#, action: .dropped, fault: "drop-message")
        #expect(try analyze(wire, spec: Self.spec(), end: 20).findings.isEmpty)
    }

    /// phoenix.js: the join unanswered for 10 s times out, the client sends phx_leave and
    /// rejoins after 1 s; a second timeout waits 2 s.
    @Test func aJoinTimeoutIsRejoinedOnTheSchedule() throws {
        var (wire, conn) = Self.joined(answered: false)
        wire.client(conn, at: 10.1, #"["1","2","room:lobby","phx_leave",{}]"#)
        Self.join(&wire, conn, at: 11.1, ref: 3)
        wire.client(conn, at: 21.1, #"["3","4","room:lobby","phx_leave",{}]"#)
        Self.join(&wire, conn, at: 23.1, ref: 5)
        Self.reply(&wire, conn, at: 23.15, ref: 5)
        #expect(try analyze(wire, spec: Self.spec(), end: 40).findings.isEmpty)
        var (early, earlyConn) = Self.joined(answered: false)
        early.client(earlyConn, at: 10.1, #"["1","2","room:lobby","phx_leave",{}]"#)
        Self.join(&early, earlyConn, at: 10.2, ref: 3)
        Self.reply(&early, earlyConn, at: 10.25, ref: 3)
        #expect(Self.messages(try analyze(early, spec: Self.spec(), end: 40))
                == ["rejoin of room:lobby 0.10 s after join timeout (10.00 s) < lower bound 1.00 s for rejoin 1 (tolerance 0.25 s)"])
    }

    /// phoenix.js retries a refused join on the schedule; phoenix-channels-python-client
    /// gives the topic up, so it owes nothing.
    @Test func aRefusedJoinIsRetriedOnlyWhereTheSpecSaysSo() throws {
        var (wire, conn) = Self.joined(answered: false)
        Self.reply(&wire, conn, at: 0.15, ref: 1, status: "error")
        Self.join(&wire, conn, at: 1.15, ref: 3)
        Self.reply(&wire, conn, at: 1.2, ref: 3, status: "error")
        Self.join(&wire, conn, at: 3.2, ref: 5)
        Self.reply(&wire, conn, at: 3.25, ref: 5)
        #expect(try analyze(wire, spec: Self.spec(), end: 20).findings.isEmpty)
        var (refused, refusedConn) = Self.joined(answered: false)
        Self.reply(&refused, refusedConn, at: 0.15, ref: 1, status: "error")
        #expect(Self.messages(try analyze(refused, spec: Self.spec(), end: 20))
                == ["no rejoin of room:lobby within 1.25 s of join refused (rejoin 1: bound 1.00 s + tolerance 0.25 s)"])
        #expect(try analyze(refused, spec: Self.spec(rejoin: Self.pythonClient), end: 20).findings.isEmpty)
    }

    /// phoenix-channels-python-client: rejoin 1 within [0.25, 0.5] s, rejoin 2 (after the
    /// rejoin's join timed out) within [0.5, 1] s of the timeout.
    @Test func thePythonClientsEqualJitterSchedule() throws {
        let spec = try Self.spec(rejoin: Self.pythonClient)
        var (wire, conn) = Self.joined()
        Self.crash(&wire, conn, at: 3)
        Self.join(&wire, conn, at: 3.4, ref: 3)
        Self.join(&wire, conn, at: 14.1, ref: 5)
        Self.reply(&wire, conn, at: 14.15, ref: 5)
        #expect(try analyze(wire, spec: spec, end: 30).findings.isEmpty)
        var (late, lateConn) = Self.joined()
        Self.crash(&late, lateConn, at: 3)
        Self.join(&late, lateConn, at: 3.8, ref: 3)
        #expect(Self.messages(try analyze(late, spec: spec, end: 5))
                == ["no rejoin of room:lobby within 0.75 s of phx_error (rejoin 1: bound 0.50 s + tolerance 0.25 s)"])
    }

    /// Schedules at the limits of what a spec may hold (a factor that overflows to
    /// infinity, floors and timeouts near 1e9 s) are clamped, never trapped on.
    @Test func extremeSchedulesAreClampedNotTrappedOn() throws {
        let huge = try JSONParser.parse(Array(#"{"kind": "exponential", "base": 999999999, "factor": 1e300, "joinTimeout": 999999999, "afterRefusal": true}"#.utf8))
        var (wire, conn) = Self.joined()
        for k in 0..<3 {
            Self.crash(&wire, conn, at: 3 + Double(k), ref: 1 + 2 * k)
            Self.join(&wire, conn, at: 3.5 + Double(k), ref: 3 + 2 * k)
            Self.reply(&wire, conn, at: 3.6 + Double(k), ref: 3 + 2 * k, status: "error")
        }
        let outcome = try analyze(wire, spec: Self.spec(schedule: huge), end: 1e8)
        #expect(outcome.findings.map(\.rule).allSatisfy { $0 == "channels.rejoin" })
        let embedded = try #require(SpecFiles.embedded("phoenix"))
        var parsed = try #require(try JSONParser.parse(embedded).objectValue)
        parsed["backoff"] = try JSONParser.parse(Array(#"{"shortSessions": {"uptimeBelow": 999999999, "within": 999999999, "floors": [999999999]}, "phases": [{"kind": "exponential", "base": 1, "factor": 1e300, "jitter": "equal", "state": "connecting"}]}"#.utf8))
        parsed["rules"] = .array(["backoff.bound", "reconnect.missing"].map { .string($0) })
        var drops = Wire()
        for k in 0..<4 { drops.end(drops.connect(at: Double(k) * 10, handshake: false), at: Double(k) * 10 + 1) }
        let floored = try analyze(drops, spec: SpecLoader.parse(.object(parsed), file: "test"), end: 1e8)
        #expect(floored.findings.map(\.rule).allSatisfy { $0 == "backoff.bound" })
    }

    @Test func theRejoinScheduleIsCheckedWhenLoaded() throws {
        for bad in [#"{"kind": "stepped", "steps": [1], "state": "x"}"#, #"{"kind": "exponential"}"#,
                    #"{"kind": "fixed", "interval": 1, "joinTimeout": -1}"#] {
            #expect(throws: SpecError.self) { try Self.spec(schedule: try JSONParser.parse(Array(bad.utf8))) }
        }
        // The built-in spec's schedule is the docs' phoenix.js example.
        let builtIn = try SpecLoader.load("phoenix").channels.rejoin
        #expect(builtIn == (try Self.spec().channels.rejoin))
        #expect(builtIn?.schedule.steps == [1, 2, 5, 10].map { Wire.us($0) })
        #expect(builtIn?.joinTimeout == Wire.us(10) && builtIn?.afterRefusal == true)
    }
}
