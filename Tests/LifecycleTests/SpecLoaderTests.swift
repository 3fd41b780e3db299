import Testing
import Foundation
import JSON
@testable import Lifecycle

@Suite struct SpecLoaderTests {
    @Test func builtInsLoadWithTheirRules() throws {
        let bird = try SpecLoader.load("bird")
        #expect(bird.rules.count == 18)
        #expect(bird.backoff.phases.first?.bound(attempt: 1) == 1_000_000)
        #expect(bird.backoff.phases.first?.bound(attempt: 10) == 30_000_000)
        #expect(bird.stale?.pongTimeout == 30_000_000)
        #expect(bird.action(forClose: 4009, closedBy: .server) == .fail)
        #expect(bird.action(forClose: 4250, closedBy: .client) == .immediate)
        #expect(bird.action(forClose: 1000, closedBy: .client) == .disconnect)
        #expect(bird.action(forClose: 1000, closedBy: .server) == .backoff)
        let agora = try SpecLoader.load("agora-rtm")
        #expect(agora.phase(at: 119_000_000)?.state == "disconnected")
        #expect(agora.phase(at: 121_000_000)?.state == "suspended")
        #expect(try SpecLoader.load("agora-rtm-stream").backoff.giveUpAfter == 1_200_000_000)
        for id in bird.rules + agora.rules { #expect(RuleRegistry.type(for: id) != nil) }
    }

    /// Issue 17 item 9: `pusher` is Bird's rules with the `pusher` prefix; `websocket` is
    /// connection level (101 means connected) with a generic backoff and no close bands.
    @Test func pusherAndWebsocketAreBuiltIn() throws {
        let bird = try SpecLoader.load("bird")
        let pusher = try SpecLoader.load("pusher")
        #expect(pusher.prefix == "pusher" && pusher.events == .realtime)
        #expect(pusher.rules == bird.rules && pusher.stale == bird.stale)
        let websocket = try SpecLoader.load("websocket")
        #expect(websocket.events == .connection && websocket.connectedOn == .upgrade && websocket.stale == nil)
        #expect(websocket.backoff.phases.first?.bound(attempt: 1) == 1_000_000)
        #expect(websocket.backoff.phases.first?.bound(attempt: 10) == 30_000_000)
        #expect(websocket.action(forClose: 4009, closedBy: .server) == .backoff)
        #expect(websocket.action(forClose: 1000, closedBy: .client) == .disconnect)
        for id in websocket.rules { #expect(RuleRegistry.type(for: id) != nil) }
    }

    func bird(with change: (inout JSONObject) -> Void) throws -> JSONValue {
        let parsed = try JSONParser.parse(try #require(SpecFiles.embedded("bird")))
        var object = try #require(parsed.objectValue)
        change(&object)
        return .object(object)
    }

    @Test func badFieldIsNamedWithTheFile() throws {
        let value = try bird { spec in
            spec["backoff"] = ["phases": [["kind": "exponential", "base": "one", "state": "unavailable"]]]
        }
        #expect(throws: SpecError(file: "my.json", field: "backoff.phases[0].base", message: "expected a number, found a string")) {
            try SpecLoader.parse(value, file: "my.json")
        }
    }

    /// Issue 35 item 11: a duration that is positive but past the limit was reported as
    /// "expected seconds >= 0"; the message names the limit it broke.
    @Test func tooLargeSecondsNameTheLimit() throws {
        let huge = try bird { $0["tolerances"] = ["timing": 1e12] }
        let error = #expect(throws: SpecError.self) { try SpecLoader.parse(huge, file: "x.json") }
        #expect(error?.description == "x.json: field 'tolerances.timing': expected seconds below 1000000000 (about 31 years), found 1000000000000.0")
        let negative = try bird { $0["tolerances"] = ["timing": -1] }
        let negativeError = #expect(throws: SpecError.self) { try SpecLoader.parse(negative, file: "x.json") }
        #expect(negativeError?.message == "expected seconds >= 0, found -1.0")
    }

    /// The new policy fields refuse what they cannot mean, naming the field.
    @Test func policyFieldsAreValidated() throws {
        func phase(_ extra: JSONObject) throws -> JSONValue {
            try bird { spec in
                var p: JSONObject = ["kind": "exponential", "base": 1, "state": "unavailable"]
                for (key, value) in extra.members { p[key] = value }
                spec["backoff"] = ["phases": [.object(p)]]
            }
        }
        func refusal(_ value: JSONValue) -> SpecError? {
            #expect(throws: SpecError.self) { try SpecLoader.parse(value, file: "x.json") }
        }
        #expect(refusal(try phase(["jitter": "additive"]))?.field == "backoff.phases[0].jitterSeconds")
        #expect(refusal(try phase(["jitter": "multiplicative", "jitterFactor": 1.5]))?.message
                == "expected a fraction from 0 to 1, found 1.5")
        #expect(refusal(try phase(["kind": "stepped"]))?.field == "backoff.phases[0].steps")
        #expect(refusal(try phase(["kind": "stepped", "steps": [0.1, -1]]))?.field == "backoff.phases[0].steps[1]")
        #expect(refusal(try phase(["capApplied": "later"]))?.field == "backoff.phases[0].capApplied")
        let zeroAttempts = try bird { $0["backoff"] = ["maxAttempts": 0, "phases": [["base": 1, "state": "u"]]] }
        #expect(refusal(zeroAttempts)?.message == "expected a whole number from 1 to 1000000, found 0")
        let timeoutAlone = try bird { $0["backoff"] = ["closeTimeout": 10, "phases": [["base": 1, "state": "u"]]] }
        #expect(refusal(timeoutAlone)?.field == "backoff.closeTimeout")
        let failWindow = try bird { $0["closeCodes"] = [["from": 4000, "action": "fail", "delay": ["max": 5]]] }
        #expect(refusal(failWindow)?.field == "closeCodes[0].delay")
        let inverted = try bird { $0["closeCodes"] = [["from": 1012, "action": "backoff", "delay": ["min": 5, "max": 1]]] }
        #expect(refusal(inverted)?.field == "closeCodes[0].delay.max")
        let heartbeat = try bird { $0["stale"] = ["model": "heartbeat"] }
        #expect(refusal(heartbeat)?.field == "stale.interval")
        let window = try SpecLoader.parse(try bird { $0["closeCodes"] = [["from": 1012, "action": "backoff", "delay": ["min": 1, "max": 5]]] },
                                          file: "x.json")
        #expect(window.closeBands.first?.delay == DelayWindow(lower: 1_000_000, upper: 5_000_000))
    }

    /// A window is computed in floating point and clamped: hostile spec values never trap.
    @Test func windowsOfExtremeValuesAreClamped() {
        var phase = LifecycleSpec.BackoffPhase(kind: .exponential, base: 9_000_000_000_000_000, factor: 1e308, cap: nil,
                                               jitter: .multiplicative, until: nil, state: "u", rule: "backoff.bound",
                                               jitterFactor: 1)
        #expect(phase.window(attempt: Int.max, previousDelay: nil) == DelayWindow(lower: 0, upper: 9_000_000_000_000_000))
        phase.jitter = .decorrelated
        #expect(phase.window(attempt: 3, previousDelay: Int64.max).upper == 9_000_000_000_000_000)
        phase.jitter = .additive
        phase.jitterSeconds = Int64.max
        #expect(phase.window(attempt: 1, previousDelay: nil).lower == 0)
    }

    @Test func unknownFieldAndRuleAreRejected() throws {
        let typo = try bird { $0["tolerances"] = ["timming": 1] }
        let error = #expect(throws: SpecError.self) { try SpecLoader.parse(typo, file: "x.json") }
        #expect(error?.field == "tolerances.timming")
        let rule = try bird { $0["rules"] = ["backoff.bound", "backoff.nope"] }
        let ruleError = #expect(throws: SpecError.self) { try SpecLoader.parse(rule, file: "x.json") }
        #expect(ruleError?.field == "rules[1]")
        #expect(ruleError?.description.hasPrefix("x.json: field 'rules[1]': unknown rule \"backoff.nope\"") == true)
    }

    /// A spec's `events` chooses a protocol table entry by any of its names, so a new entry
    /// needs no change to the loader; a name no entry claims is refused with the choices.
    @Test func eventsNamesAProtocolTableEntry() throws {
        let byKey = try SpecLoader.parse(try bird { $0["events"] = "bird" }, file: "x.json")
        #expect(byKey.events.rawValue == "bird" && byKey.events.decodesEvents)
        let connectionLevel = try SpecLoader.parse(try bird { $0["events"] = "websocket" }, file: "x.json")
        #expect(!connectionLevel.events.decodesEvents && !LifecycleSpec.EventLevel.connection.decodesEvents)
        #expect(LifecycleSpec.EventLevel.realtime.decodesEvents)
        let unknown = #expect(throws: SpecError.self) {
            try SpecLoader.parse(try bird { $0["events"] = "no-such-protocol" }, file: "x.json")
        }
        #expect(unknown?.field == "events")
        // Every key and alias of the table, in its order (each pack adds its own before the connection level).
        #expect(unknown?.description.contains("expected one of: realtime, pusher, bird, ") == true)
        for name in ["socket.io, engine.io, socketio", "graphql-ws", "graphql-transport-ws", "signalr", "phoenix-channels, phoenix",
                     "connection, websocket)"] {
            #expect(unknown?.description.contains(name) == true, "\(name)")
        }
    }

    @Test func userSpecFileGoesThroughTheSamePath() throws {
        let value = try bird { spec in
            spec["name"] = "slowpoke"
            spec["backoff"] = ["phases": [["kind": "exponential", "base": 5, "factor": 3, "cap": 60, "state": "waiting"]]]
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("slowpoke.json").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data(JSONWriter.serialize(value).utf8)))
        let spec = try SpecLoader.load(file)
        #expect(spec.name == "slowpoke")
        #expect(spec.backoff.phases[0].bound(attempt: 3) == 45_000_000)
        #expect(throws: SpecError.self) { try SpecLoader.load(dir.appendingPathComponent("missing.json").path) }
        #expect(throws: SpecError.self) { try SpecLoader.parse(Array("{".utf8), file: "broken.json") }
    }

    /// The worked example of docs/spec-format.md parses and means what the doc says.
    @Test func workedExampleInDocsLoads() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/spec-format.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let heron = try #require(text.range(of: "Its spec:\n\n```json\n"))
        let start = heron
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let spec = try SpecLoader.parse(Array(text[start.upperBound..<end.lowerBound].utf8), file: "docs/spec-format.md")
        #expect(spec.name == "heron")
        #expect(spec.backoff.phases[0].bound(attempt: 3) == 4_500_000)
        #expect(spec.action(forClose: 4401, closedBy: .server) == .fail)
        #expect(spec.action(forClose: 4009, closedBy: .server) == .backoff)
        #expect(!spec.backoff.resetOnConnect)
    }
}
