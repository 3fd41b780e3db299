import Capture
import Protocols
import Vocabulary

/// When and to which connections a rule applies. All given conditions must hold.
///
/// Scope (decided once per connection):
/// - `conn=N` or `conn=N-M`: the Nth (to Mth) connection that sent a WebSocket upgrade
///   request, from 1 (a probe that never sends one takes no number).
/// - `every=N`: every Nth connection: N, 2N, 3N...; with `conn=A-B`: A, A+N, A+2N... up to B.
/// - `client=KEY`: the connection's client key contains KEY. The relay derives the key from
///   the upgrade request as `User-Agent` + " " + request target, so `client=pysher` or
///   `client=/app/key1` both work.
/// - `host=NAME`: the upgrade request's `Host` is NAME (case-insensitive; the port is
///   ignored unless NAME has one; `*.example.com` matches every name under example.com):
///   for a forward proxy, or a reverse proxy with several `--route`s, one host's clients.
/// - `path=PREFIX`: the request's path (without the query) starts with PREFIX.
/// - `prob=P`: the connection is picked with probability P (0...1), drawn from the engine's
///   seed, the rule's id and the connection's number, so a run repeats exactly.
///
/// Start (the fault arms once all of these have happened, and never before the WebSocket is
/// open, except for kinds that act at the upgrade):
/// - `after=DUR`: DUR after the connection opened.
/// - `at=DUR`: DUR after the proxy started.
/// - `on=EVENT`: after a frame carrying that event name (as sent) was relayed (either way).
/// - `on-kind=KIND`: after a frame whose decoded event is of that kind (`RealtimeEventKind`:
///   `subscription_succeeded`, `pong` ...) was relayed, whatever the protocol names it.
/// - `frames=N`: after N frames were relayed (both directions, control frames included).
///
/// End (every kind):
/// - `for=DUR`: the fault stops DUR after it armed, and the connection has normal service
///   again (a 10-second latency spike, a 30-second blackhole).
public struct FaultTrigger: Sendable, Hashable {
    public static let keys = ["after", "at", "on", "on-kind", "frames", "conn", "every", "client", "host", "path", "prob", "for"]

    public var after: Micros?
    public var at: Micros?
    public var onEvent: String?
    public var onKind: RealtimeEventKind?
    public var frames: Int?
    public var connections: ClosedRange<Int>?
    public var every: Int?
    public var client: String?
    public var host: String?
    public var path: String?
    public var probability: Double?
    /// How long the fault acts once armed (`for=`); nil: until the rule is removed.
    public var duration: Micros?
    /// The options as written, for error positions.
    var written: [FaultRule.Option] = []

    public init() {}

    public static func == (lhs: FaultTrigger, rhs: FaultTrigger) -> Bool {
        lhs.after == rhs.after && lhs.at == rhs.at && lhs.onEvent == rhs.onEvent && lhs.onKind == rhs.onKind && lhs.frames == rhs.frames
            && lhs.connections == rhs.connections && lhs.every == rhs.every && lhs.client == rhs.client
            && lhs.host == rhs.host && lhs.path == rhs.path && lhs.probability == rhs.probability && lhs.duration == rhs.duration
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(after); hasher.combine(at); hasher.combine(onEvent); hasher.combine(onKind); hasher.combine(frames)
        hasher.combine(connections?.lowerBound); hasher.combine(connections?.upperBound)
        hasher.combine(every); hasher.combine(client); hasher.combine(host); hasher.combine(path)
        hasher.combine(probability); hasher.combine(duration)
    }

    func has(_ key: String) -> Bool { written.contains { $0.key == key } }
    func option(_ key: String) -> FaultRule.Option? { written.first { $0.key == key } }

    /// A condition that needs frames (`on=`, `on-kind=`, `frames=`), for kinds that act before any.
    var frameConditionKey: String? { onEvent != nil ? "on" : onKind != nil ? "on-kind" : frames != nil ? "frames" : nil }

    /// Whether the rule waits for an event (`on=`, `on-kind=`).
    var waitsForEvent: Bool { onEvent != nil || onKind != nil }

    /// Whether a relayed frame's event is the one the rule waits for.
    func startsOn(_ event: RealtimeEvent) -> Bool {
        (onEvent.map { $0 == event.name } ?? true) && (onKind.map { $0 == event.kind } ?? true) && waitsForEvent
    }

    /// Whether the rule depends on the upgrade request (client key, host, path), known only
    /// once it is read.
    public var needsClientKey: Bool { client != nil || host != nil || path != nil }

    /// Whether a connection's upgrade request is in the rule's `client=`, `host=` and
    /// `path=` scope. `host` is the request's `Host` header, `path` its target.
    public func matchesRequest(clientKey: String, host requestHost: String?, path requestPath: String?) -> Bool {
        if let client, !clientKey.contains(client) { return false }
        if let host {
            guard let requestHost else { return false }
            if !HostPattern.matches(host, hostHeader: requestHost) { return false }
        }
        if let path {
            guard let requestPath else { return false }
            let bare = requestPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            if !bare.hasPrefix(path) { return false }
        }
        return true
    }

    mutating func set(_ option: FaultRule.Option, rule: String) throws(FaultRuleError) {
        func fail(_ message: String) -> FaultRuleError {
            FaultRuleError(message, rule: rule, column: option.valueColumn, length: option.valueLength)
        }
        func count(_ text: String, _ what: String) throws(FaultRuleError) -> Int {
            guard let n = Int(text), n >= 1 else { throw fail("\(what) must be a whole number of at least 1, not '\(text)'") }
            return n
        }
        func duration() throws(FaultRuleError) -> Micros {
            switch FaultDuration.parse(option.value) {
            case .success(let micros): return micros
            case .failure(let failure): throw fail(failure.message)
            }
        }
        written.append(option)
        switch option.key {
        case "after": after = try duration()
        case "at": at = try duration()
        case "for": self.duration = try duration()
        case "on":
            guard !option.value.isEmpty else { throw fail("on= needs an event name, as in on=bird:pong") }
            onEvent = option.value
        case "on-kind":
            guard let kind = RealtimeEventKind(rawValue: option.value) else {
                let kinds = RealtimeEventKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("on-kind= must be an event kind (\(kinds)), not '\(option.value)'")
            }
            onKind = kind
        case "frames": frames = try count(option.value, "frames")
        case "every": every = try count(option.value, "every")
        case "client":
            guard !option.value.isEmpty else { throw fail("client= needs a key to match") }
            client = option.value
        case "host":
            guard !option.value.isEmpty, !option.value.contains("/") else {
                throw fail("host= needs a host name, as in host=api.example.com or host=*.example.com")
            }
            host = option.value
        case "path":
            guard option.value.hasPrefix("/") else { throw fail("path= needs a path starting with '/', as in path=/app/") }
            path = option.value
        case "conn":
            let bounds = option.value.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard bounds.count <= 2 else { throw fail("conn must be N or N-M, not '\(option.value)'") }
            let low = try count(bounds[0], "conn")
            let high = bounds.count == 2 ? try count(bounds[1], "conn") : low
            guard low <= high else { throw fail("conn range \(low)-\(high) is empty") }
            connections = low...high
        case "prob":
            guard let p = Double(option.value), p >= 0, p <= 1 else {
                throw fail("prob must be a number from 0 to 1, not '\(option.value)'")
            }
            probability = p
        default:
            throw fail("unknown trigger '\(option.key)'")
        }
    }

    /// Whether connection number `ordinal` is in the rule's connection scope (not `client`, `prob`).
    public func selects(connection ordinal: Int) -> Bool {
        if let connections, !connections.contains(ordinal) { return false }
        if let every {
            let base = connections?.lowerBound ?? every
            guard ordinal >= base, (ordinal - base) % every == 0 else { return false }
        }
        return true
    }

    /// The earliest time the rule may arm on a connection opened at `openedAt`.
    public func earliestStart(openedAt: Micros, proxyStart: Micros) -> Micros {
        max(openedAt + (after ?? 0), at.map { proxyStart + $0 } ?? openedAt)
    }
}

extension FaultTrigger {
    /// "  after=DUR  ..." lines for `--help` and docs, in the order of `keys`.
    public static let helpLines: [String] = [
        "  after=DUR      start DUR after the connection opened (500ms, 5s, 1.5s, 2m)",
        "  at=DUR         start DUR after the proxy started",
        "  on=EVENT       start after a frame carrying that event (on=bird_internal:subscription_succeeded)",
        "  on-kind=KIND   start after a frame whose event is of that kind (on-kind=subscription_succeeded)",
        "  frames=N       start after N frames were relayed (both ways)",
        "  conn=N|N-M     only the Nth (to Mth) connection that sends an upgrade request (probes don't count)",
        "  every=N        only every Nth connection (N, 2N, ...; from conn's first with conn=)",
        "  client=KEY     only connections whose 'User-Agent target' contains KEY",
        "  host=NAME      only connections whose Host is NAME (*.example.com: a domain)",
        "  path=PREFIX    only connections whose request path starts with PREFIX",
        "  prob=P         each connection with probability P, repeatable with --seed",
        "  for=DUR        stop DUR after the fault started: normal service again",
    ]
}
