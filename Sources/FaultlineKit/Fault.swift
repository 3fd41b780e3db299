import JSON

/// One fault rule for a `RecordingProxy`, built with the typed functions below or written
/// in `faultline proxy --fault`'s syntax (a string literal works too). Either way it is the
/// same rule text, parsed and checked by the proxy's own parser when the proxy starts:
///
///     let faults: [Fault] = [
///         .close(code: 4009, after: .seconds(3), reason: "terminated"),   // close:4009,after=3s,reason=terminated
///         .stallPongs(after: .seconds(5)).onConnection(2),                // stall-pongs,after=5s,conn=2
///         "latency:200ms,dir=s2c",
///     ]
public struct Fault: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The rule in `--fault` syntax.
    public let rule: String

    /// A rule as `faultline proxy --fault` takes it; checked when the proxy starts.
    public init(rule: String) { self.rule = rule }
    public init(stringLiteral rule: String) { self.rule = rule }

    public var description: String { rule }

    /// Which way a fault acts, for kinds that take `dir=`.
    public enum Direction: String, Sendable, Hashable {
        /// Frames from the client to the server.
        case clientToServer = "c2s"
        /// Frames from the server to the client.
        case serverToClient = "s2c"
    }

    // MARK: Kinds

    /// `close:CODE`: a close frame with `code` sent to `peer` (the client by default), as the
    /// other side would send it, and the other side's socket closed.
    public static func close(code: Int, after: Duration? = nil, on event: String? = nil, reason: String? = nil,
                             to peer: Peer? = nil) -> Fault {
        make("close:\(code)", after: after, on: event, ["reason": reason, "to": peer?.rawValue])
    }

    /// `drop`: both connections ended with FIN and no close frame (a network drop).
    public static func drop(after: Duration? = nil, on event: String? = nil) -> Fault {
        make("drop", after: after, on: event)
    }

    /// `reset`: both connections reset (RST).
    public static func reset(after: Duration? = nil, on event: String? = nil) -> Fault {
        make("reset", after: after, on: event)
    }

    /// `stall-pongs`: the server's pongs are swallowed, so the client's stale check fires.
    public static func stallPongs(after: Duration? = nil, on event: String? = nil) -> Fault {
        make("stall-pongs", after: after, on: event)
    }

    /// `blackhole`: nothing passes either way, and no connection ends.
    public static func blackhole(after: Duration? = nil, on event: String? = nil) -> Fault {
        make("blackhole", after: after, on: event)
    }

    /// `latency:DUR`: every frame held `delay` (plus up to `jitter`) before it is passed on.
    public static func latency(_ delay: Duration, jitter: Duration? = nil, direction: Direction? = nil,
                               after: Duration? = nil) -> Fault {
        make("latency:\(text(delay))", after: after, on: nil,
             ["jitter": jitter.map(text), "dir": direction?.rawValue])
    }

    /// `refuse:CODE`: the upgrade is accepted, then closed at once with `code`; the upstream
    /// is never contacted.
    public static func refuse(code: Int, reason: String? = nil) -> Fault {
        make("refuse:\(code)", after: nil, on: nil, ["reason": reason])
    }

    /// `refuse-http:STATUS`: the upgrade is answered with that HTTP status.
    public static func refuseHTTP(status: Int) -> Fault { make("refuse-http:\(status)", after: nil, on: nil) }

    /// `strip-socket-id`: `socket_id` removed from the server's handshake (a broken server).
    public static func stripSocketID() -> Fault { make("strip-socket-id", after: nil, on: nil) }

    /// `inject:JSON`: a text frame with `json` sent to `peer` (the client by default).
    public static func inject(json: String, to peer: Peer? = nil, after: Duration? = nil, on event: String? = nil) -> Fault {
        make("inject:\(json)", after: after, on: event, ["to": peer?.rawValue])
    }

    // MARK: Scope

    /// Only the `number`th connection (`conn=N`, counted from 1).
    public func onConnection(_ number: Int) -> Fault { adding("conn", "\(number)") }
    /// Only connections `range` (`conn=N-M`).
    public func onConnections(_ range: ClosedRange<Int>) -> Fault { adding("conn", "\(range.lowerBound)-\(range.upperBound)") }
    /// Only connections whose client key (User-Agent and request target) contains `key`.
    public func forClients(matching key: String) -> Fault { adding("client", key) }
    /// Each connection picked with `probability` (0...1), repeatably for the proxy's seed.
    public func withProbability(_ probability: Double) -> Fault { adding("prob", "\(probability)") }
    /// The fault stops `duration` after it armed (`for=`).
    public func lasting(_ duration: Duration) -> Fault { adding("for", Self.text(duration)) }

    // MARK: Text

    private static func make(_ head: String, after: Duration?, on event: String?,
                             _ options: KeyValuePairs<String, String?> = [:]) -> Fault {
        var rule = Fault(rule: head)
        if let after { rule = rule.adding("after", text(after)) }
        if let event { rule = rule.adding("on", event) }
        for (key, value) in options { if let value { rule = rule.adding(key, value) } }
        return rule
    }

    private func adding(_ key: String, _ value: String) -> Fault {
        Fault(rule: rule + ",\(key)=" + Self.quotedIfNeeded(value))
    }

    /// A duration in the rule syntax's units: whole seconds as `3s`, else milliseconds or
    /// microseconds, whichever is exact (below a microsecond is dropped, the rules' unit).
    static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return "\(seconds)s" }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (micros, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        guard !overflow, !overflow2 else { return "\(seconds)s" }
        return micros % 1_000 == 0 ? "\(micros / 1_000)ms" : "\(micros)us"
    }

    /// A value that would end the option (a comma) or be misread (a quote, a bracket, space
    /// at either end) is written as a double-quoted JSON string, which the parser reads back.
    static func quotedIfNeeded(_ value: String) -> String {
        let special: Set<Character> = [",", "\"", "{", "}", "[", "]", "\\"]
        guard value.contains(where: { special.contains($0) || $0.isNewline })
                || value.first?.isWhitespace == true || value.last?.isWhitespace == true else { return value }
        var quoted: [UInt8] = []
        JSONWriter.writeString(value, into: &quoted)
        return String(decoding: quoted, as: UTF8.self)
    }
}

/// One side of a proxied connection: where an injected close or frame goes, who sent a
/// finding's evidence.
public enum Peer: String, Sendable, Hashable { case client, server }
