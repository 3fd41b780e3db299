import JSON
import Capture
import Foundation
import Vocabulary

/// Loads specs: built-in names (`bird`, `agora-rtm`, ...: one a JSON file in
/// `Sources/Lifecycle/Specs`, embedded in the binary) go through exactly the same parser as
/// a user's file.
public enum SpecLoader {
    /// Every built-in spec's name, in name order.
    public static var builtInNames: [String] { SpecFiles.names }

    /// `NAME` of a built-in spec, or the path of a JSON spec file. `$FAULTLINE_SPECS/NAME.json`
    /// replaces built-in NAME when it exists.
    public static func load(_ nameOrPath: String) throws(SpecError) -> LifecycleSpec {
        try load(nameOrPath, overrides: SpecFiles.overrideFolder)
    }

    /// `load(_:)` with the override folder given (nil: none).
    static func load(_ nameOrPath: String, overrides: String?) throws(SpecError) -> LifecycleSpec {
        guard let bytes = SpecFiles.embedded(nameOrPath) else { return try load(file: nameOrPath) }
        if let path = SpecFiles.overridePath(for: nameOrPath, in: overrides) { return try load(file: path) }
        return try parse(bytes, file: "built-in spec \(nameOrPath)")
    }

    public static func load(file path: String) throws(SpecError) -> LifecycleSpec {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SpecError(file: path, field: "", message: "cannot read the spec file (expected a built-in name: \(builtInNames.joined(separator: ", ")), or a JSON file)")
        }
        return try parse(Array(data), file: path)
    }

    /// Parses a spec document; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(SpecError) -> LifecycleSpec {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw SpecError(file: file, field: "", message: "not valid JSON: \(error)")
        }
        return try parse(value, file: file)
    }

    public static func parse(_ value: JSONValue, file: String) throws(SpecError) -> LifecycleSpec {
        let root = try SpecReader(file: file, path: "", value: value)
        try root.only(["name", "description", "events", "prefix", "states", "connectedOn", "closeCodes",
                       "disconnectCodes", "refusalStatuses", "backoff", "stale", "channels", "tolerances", "rules",
                       "reportDelays", "honoursServerEndings"])
        let states = try parseStates(root.child("states"), root)
        let tolerances = try parseTolerances(root.child("tolerances"))
        var spec = LifecycleSpec(
            name: try root.requiredString("name"),
            description: try root.string("description") ?? "",
            events: try root.eventLevel("events") ?? .realtime,
            prefix: try root.string("prefix"),
            states: states,
            connectedOn: try root.choice("connectedOn", LifecycleSpec.ConnectedOn.self) ?? .handshake,
            closeBands: try parseBands(root),
            disconnectCodes: try codes(root, "disconnectCodes") ?? [1000, 1001],
            refusalStatuses: try statuses(root),
            backoff: try parseBackoff(root.child("backoff"), root),
            stale: try parseStale(root.child("stale")),
            channels: try parseChannels(root.child("channels")),
            tolerances: tolerances,
            rules: [])
        spec.reportDelays = try root.bool("reportDelays") ?? false
        spec.honoursServerEndings = try root.bool("honoursServerEndings") ?? false
        guard let rules = try root.array("rules") else { throw root.fail("rules", "missing (expected an array of rule ids)") }
        for (i, rule) in rules.enumerated() {
            guard let id = rule.stringValue, RuleRegistry.type(for: id) != nil else {
                throw SpecError(file: file, field: "rules[\(i)]",
                                message: "unknown rule \(JSONWriter.serialize(rule)) (known: \(RuleRegistry.ids.joined(separator: ", ")))")
            }
            spec.rules.append(id)
            if let model = spec.stale?.model, model.inapplicableRules.contains(id) {
                throw SpecError(file: file, field: "rules[\(i)]",
                                message: "\(id) does not apply to the \(model.rawValue) liveness model")
            }
        }
        for (i, phase) in spec.backoff.phases.enumerated() where RuleRegistry.type(for: phase.rule) == nil {
            throw SpecError(file: file, field: "backoff.phases[\(i)].rule", message: "unknown rule \"\(phase.rule)\"")
        }
        return spec
    }

    private static func parseStates(_ r: SpecReader?, _ root: SpecReader) throws(SpecError) -> LifecycleSpec.StateNames {
        guard let r else { throw root.fail("states", "missing (expected an object)") }
        try r.only(["initial", "connecting", "connected", "disconnected", "failed"])
        return LifecycleSpec.StateNames(
            initial: try r.requiredString("initial"), connecting: try r.requiredString("connecting"),
            connected: try r.requiredString("connected"), disconnected: try r.requiredString("disconnected"),
            failed: try r.requiredString("failed"))
    }

    private static func parseBand(_ r: SpecReader, needsAction: Bool) throws(SpecError) -> LifecycleSpec.CloseBand {
        try r.only(needsAction ? ["from", "to", "action", "delay"] : ["from", "to"])
        guard let from = try r.closeCode("from") else { throw r.fail("from", "missing (expected a close code)") }
        let to = try r.closeCode("to") ?? from
        guard to >= from else { throw r.fail("to", "must not be below 'from' (\(from))") }
        var action = CloseAction.backoff
        if needsAction {
            guard let a = try r.choice("action", CloseAction.self) else { throw r.fail("action", "missing (expected fail, immediate or backoff)") }
            action = a
        }
        let delay = try r.child("delay").map { w throws(SpecError) in try parseDelayRange(w) }
        if delay != nil, action != .backoff { throw r.fail("delay", "only a backoff band has a delay window (action is \(action.rawValue))") }
        return LifecycleSpec.CloseBand(from: from, to: to, action: action, delay: delay)
    }

    private static func parseDelayRange(_ r: SpecReader) throws(SpecError) -> DelayWindow {
        try r.only(["min", "max"])
        let low = try r.seconds("min") ?? 0
        let high = try r.requiredSeconds("max")
        guard high >= low else { throw r.fail("max", "must not be below 'min' (\(formatSeconds(low)))") }
        return DelayWindow(lower: low, upper: high)
    }

    private static func parseBands(_ root: SpecReader) throws(SpecError) -> [LifecycleSpec.CloseBand] {
        var bands: [LifecycleSpec.CloseBand] = []
        for (i, v) in (try root.array("closeCodes") ?? []).enumerated() {
            bands.append(try parseBand(SpecReader(file: root.file, path: "closeCodes[\(i)]", value: v), needsAction: true))
        }
        return bands
    }

    private static func codes(_ r: SpecReader, _ key: String) throws(SpecError) -> [UInt16]? {
        guard let list = try r.array(key) else { return nil }
        var out: [UInt16] = []
        for (i, v) in list.enumerated() {
            guard let c = v.intValue, (0...65535).contains(c) else {
                throw SpecError(file: r.file, field: r.field("\(key)[\(i)]"), message: "expected a close code, found \(JSONWriter.serialize(v))")
            }
            out.append(UInt16(c))
        }
        return out
    }

    private static func statuses(_ r: SpecReader) throws(SpecError) -> [Int] {
        var out: [Int] = []
        for (i, v) in (try r.array("refusalStatuses") ?? []).enumerated() {
            guard let c = v.intValue, (100...599).contains(c) else {
                throw SpecError(file: r.file, field: "refusalStatuses[\(i)]", message: "expected an HTTP status, found \(JSONWriter.serialize(v))")
            }
            out.append(Int(c))
        }
        return out
    }

    private static func parseBackoff(_ r: SpecReader?, _ root: SpecReader) throws(SpecError) -> LifecycleSpec.BackoffSpec {
        guard let r else { throw root.fail("backoff", "missing (expected an object with phases)") }
        try r.only(["phases", "resetOnConnect", "resetAfterUptime", "giveUpAfter", "maxAttempts", "delayFrom", "closeTimeout",
                    "shortSessions"])
        guard let list = try r.array("phases"), !list.isEmpty else { throw r.fail("phases", "missing or empty (expected at least one phase)") }
        var phases: [LifecycleSpec.BackoffPhase] = []
        for (i, v) in list.enumerated() {
            phases.append(try parsePhase(SpecReader(file: r.file, path: r.field("phases[\(i)]"), value: v)))
        }
        let delayFrom = try r.choice("delayFrom", LifecycleSpec.DelayStart.self) ?? .drop
        let closeTimeout = try r.seconds("closeTimeout")
        if closeTimeout != nil, delayFrom != .closed { throw r.fail("closeTimeout", "applies only with \"delayFrom\": \"closed\"") }
        return LifecycleSpec.BackoffSpec(phases: phases, resetOnConnect: try r.bool("resetOnConnect") ?? true,
                                         giveUpAfter: try r.seconds("giveUpAfter"),
                                         resetAfterUptime: try r.seconds("resetAfterUptime"),
                                         maxAttempts: try r.count("maxAttempts"), delayFrom: delayFrom,
                                         closeTimeout: closeTimeout,
                                         shortSessions: try r.child("shortSessions").map { s throws(SpecError) in try parseShortSessions(s) })
    }

    /// One backoff phase: a reconnect schedule's (`state`: with `until`, `state` and `rule`)
    /// or another schedule in the same vocabulary (the channel rejoin's), whose own fields
    /// `extra` the caller reads.
    private static func parsePhase(_ p: SpecReader, state: Bool = true, extra: [String] = []) throws(SpecError) -> LifecycleSpec.BackoffPhase {
        try p.only(["kind", "base", "interval", "steps", "factor", "cap", "jitter", "jitterSeconds", "jitterFactor",
                    "capApplied", "floor"] + (state ? ["until", "state", "rule"] : extra))
        let kind = try p.choice("kind", LifecycleSpec.BackoffPhase.Kind.self) ?? .exponential
        let base: Micros
        var steps: [Micros] = []
        switch kind {
        case .fixed:
            guard let interval = try p.seconds("interval") else { throw p.fail("interval", "missing (a fixed phase needs seconds)") }
            base = interval
        case .stepped:
            steps = try parseSteps(p)
            base = try p.seconds("base") ?? steps[0]
        case .exponential:
            base = try p.requiredSeconds("base")
        }
        let jitter = try p.choice("jitter", LifecycleSpec.BackoffPhase.Jitter.self) ?? .full
        let jitterSeconds = try p.seconds("jitterSeconds")
        let jitterFactor = try p.number("jitterFactor")
        if jitter == .additive, jitterSeconds == nil { throw p.fail("jitterSeconds", "missing (additive jitter needs seconds)") }
        if jitter == .multiplicative, jitterFactor == nil { throw p.fail("jitterFactor", "missing (multiplicative jitter needs a fraction)") }
        if let jitterFactor, !(0...1).contains(jitterFactor) { throw p.fail("jitterFactor", "expected a fraction from 0 to 1, found \(jitterFactor)") }
        let factor = try p.number("factor") ?? 2
        guard factor >= 1 else { throw p.fail("factor", "must be >= 1, found \(factor)") }
        let cap = try p.seconds("cap")
        var (until, stateName, rule): (Micros?, String, String) = (nil, "", "")
        if state {
            (until, stateName, rule) = (try p.seconds("until"), try p.requiredString("state"), try p.string("rule") ?? "backoff.bound")
        }
        return LifecycleSpec.BackoffPhase(
            kind: kind, base: base, factor: factor, cap: cap, jitter: jitter, until: until, state: stateName, rule: rule, steps: steps,
            jitterSeconds: jitterSeconds ?? 0, jitterFactor: jitterFactor ?? 0,
            capApplied: try p.choice("capApplied", LifecycleSpec.BackoffPhase.CapApplied.self) ?? .beforeJitter,
            floor: try p.seconds("floor"))
    }

    private static func parseChannels(_ r: SpecReader?) throws(SpecError) -> LifecycleSpec.ChannelSpec {
        guard let r else { return LifecycleSpec.ChannelSpec(resubscribeWindow: micros(seconds: 10)) }
        try r.only(["resubscribeWindow", "rejoin"])
        let rejoin = try r.child("rejoin").map { j throws(SpecError) in
            LifecycleSpec.RejoinSchedule(schedule: try parsePhase(j, state: false, extra: ["joinTimeout", "afterRefusal"]),
                                         joinTimeout: try j.seconds("joinTimeout"), afterRefusal: try j.bool("afterRefusal") ?? false)
        }
        return LifecycleSpec.ChannelSpec(resubscribeWindow: try r.seconds("resubscribeWindow") ?? micros(seconds: 10), rejoin: rejoin)
    }

    private static func parseShortSessions(_ r: SpecReader) throws(SpecError) -> LifecycleSpec.ShortSessionFloors {
        try r.only(["uptimeBelow", "within", "floors", "applied"])
        guard let list = try r.array("floors"), !list.isEmpty else { throw r.fail("floors", "missing or empty (the floors in seconds, after 1, 2, ... short sessions)") }
        return LifecycleSpec.ShortSessionFloors(
            uptimeBelow: try r.requiredSeconds("uptimeBelow"), within: try r.requiredSeconds("within"),
            floors: try secondsList(list, r, "floors"),
            applied: try r.choice("applied", LifecycleSpec.FloorApplied.self) ?? .beforeJitter)
    }

    private static func parseSteps(_ p: SpecReader) throws(SpecError) -> [Micros] {
        guard let list = try p.array("steps"), !list.isEmpty else { throw p.fail("steps", "missing or empty (a stepped phase needs its delays in seconds)") }
        return try secondsList(list, p, "steps")
    }

    /// The seconds of the array `key` of `r`, each checked.
    private static func secondsList(_ list: [JSONValue], _ r: SpecReader, _ key: String) throws(SpecError) -> [Micros] {
        var out: [Micros] = []
        for (i, v) in list.enumerated() {
            guard let d = v.doubleValue, d >= 0, d < maxDurationSeconds else {
                throw SpecError(file: r.file, field: r.field("\(key)[\(i)]"),
                                message: "expected seconds from 0 to below \(Int64(maxDurationSeconds)), found \(JSONWriter.serialize(v))")
            }
            out.append(micros(seconds: d))
        }
        return out
    }

    private static func parseStale(_ r: SpecReader?) throws(SpecError) -> LifecycleSpec.StaleSpec? {
        guard let r else { return nil }
        try r.only(["model", "activityTimeout", "handshakeOverrides", "pongTimeout", "interval", "closeCodes"])
        let band = try r.child("closeCodes").map { c throws(SpecError) in try parseBand(c, needsAction: false) }
            ?? LifecycleSpec.CloseBand(from: 4200, to: 4299, action: .immediate)
        let model = try r.choice("model", LifecycleSpec.LivenessModel.self) ?? .pingAfterSilence
        let interval = try r.seconds("interval")
        if model != .pingAfterSilence, interval == nil { throw r.fail("interval", "missing (the \(model.rawValue) model needs seconds)") }
        if model == .pingAfterSilence, interval != nil { throw r.fail("interval", "applies only to the heartbeat, serverPing and serverTimeout models") }
        return LifecycleSpec.StaleSpec(
            activityTimeout: try r.seconds("activityTimeout") ?? micros(seconds: 120),
            handshakeOverrides: try r.bool("handshakeOverrides") ?? true,
            pongTimeout: try r.seconds("pongTimeout") ?? micros(seconds: 30),
            closeBand: band, model: model, interval: interval ?? 0)
    }

    private static func parseTolerances(_ r: SpecReader?) throws(SpecError) -> LifecycleSpec.Tolerances {
        guard let r else { return LifecycleSpec.Tolerances(timing: micros(seconds: 0.25), immediate: micros(seconds: 0.5)) }
        try r.only(["timing", "immediate"])
        return LifecycleSpec.Tolerances(timing: try r.seconds("timing") ?? micros(seconds: 0.25),
                                        immediate: try r.seconds("immediate") ?? micros(seconds: 0.5))
    }
}
