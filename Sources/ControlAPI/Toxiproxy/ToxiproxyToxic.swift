import Faults
import JSON

/// One toxic as toxiproxy's API describes it (`{"name","type","stream","toxicity",
/// "attributes"}`), and the Faultline rule it stands for. Kept as given, so a client reads
/// back what it wrote.
public struct ToxiproxyToxic: Sendable, Hashable {
    public static let types = ["latency", "bandwidth", "slow_close", "timeout", "slicer", "limit_data", "reset_peer"]

    public var name: String
    public var type: String
    /// "upstream" (client to server) or "downstream" (server to client, the default).
    public var stream: String
    public var toxicity: Double
    /// Each attribute as a whole number (toxiproxy's attributes are integers).
    public var attributes: [(key: String, value: Int64)]

    public static func == (lhs: ToxiproxyToxic, rhs: ToxiproxyToxic) -> Bool { lhs.json == rhs.json }
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }

    /// The attributes each type takes, with toxiproxy's defaults.
    static func defaults(_ type: String) -> [(key: String, value: Int64)] {
        switch type {
        case "latency": [("latency", 0), ("jitter", 0)]
        case "bandwidth": [("rate", 0)]
        case "slow_close": [("delay", 0)]
        case "timeout": [("timeout", 0)]
        case "slicer": [("average_size", 0), ("size_variation", 0), ("delay", 0)]
        case "limit_data": [("bytes", 0)]
        default: [("timeout", 0)]
        }
    }

    /// A toxic from a request body; `base` is the toxic being updated (its values are kept
    /// where the body says nothing). The message says what is wrong, for a 400.
    public static func parse(_ body: JSONValue, updating base: ToxiproxyToxic? = nil) -> Result<ToxiproxyToxic, ToxiproxyFailure> {
        guard case .object(let object) = body else { return .failure(.bad("the body must be a JSON object")) }
        guard let type = object["type"]?.stringValue ?? base?.type else { return .failure(.bad("missing toxic type")) }
        guard types.contains(type) else {
            return .failure(.bad("unknown toxic type '\(type)' (Faultline serves: \(types.joined(separator: ", ")))"))
        }
        let stream = object["stream"]?.stringValue ?? base?.stream ?? "downstream"
        guard stream == "upstream" || stream == "downstream" else {
            return .failure(.bad("stream must be upstream or downstream, not '\(stream)'"))
        }
        let toxicity = object["toxicity"]?.doubleValue ?? base?.toxicity ?? 1
        guard toxicity >= 0, toxicity <= 1 else { return .failure(.bad("toxicity must be from 0 to 1")) }
        var attributes = base?.attributes ?? defaults(type)
        if let given = object["attributes"] {
            guard case .object(let values) = given else { return .failure(.bad("attributes must be an object")) }
            for (key, value) in values.members {
                guard let index = attributes.firstIndex(where: { $0.key == key }) else {
                    return .failure(.bad("unknown attribute '\(key)' for \(type) (known: \(attributes.map(\.key).joined(separator: ", ")))"))
                }
                guard let number = value.intValue ?? value.doubleValue.flatMap({ Int64(exactly: $0.rounded()) }),
                      number >= 0, number <= 1_000_000_000_000 else {
                    return .failure(.bad("attribute '\(key)' must be a whole number from 0 to 10^12"))
                }
                attributes[index].value = number
            }
        }
        let name = object["name"]?.stringValue ?? base?.name ?? "\(type)_\(stream)"
        if let problem = ToxiproxyNames.problem(name, what: "toxic") { return .failure(.bad(problem)) }
        let toxic = ToxiproxyToxic(name: name, type: type, stream: stream, toxicity: toxicity, attributes: attributes)
        if case .failure(let failure) = toxic.rule() { return .failure(failure) }
        return .success(toxic)
    }

    func attribute(_ key: String) -> Int64 { attributes.first { $0.key == key }?.value ?? 0 }

    /// The Faultline rule text: latency -> `latency:Nms,jitter=Nms`, bandwidth ->
    /// `bandwidth:NKB/s`, slow_close -> `slow-close:Nms`, timeout -> `timeout:Nms`, slicer ->
    /// `slicer,size=,variation=,delay=Nus`, limit_data -> `limit-data:N`, reset_peer ->
    /// `reset,after=Nms`; `dir=c2s` upstream, `dir=s2c` downstream; `prob=` below toxicity 1.
    public var ruleText: String {
        var text: String
        switch type {
        case "latency": text = "latency:\(attribute("latency"))ms,jitter=\(attribute("jitter"))ms"
        case "bandwidth": text = "bandwidth:\(attribute("rate"))KB/s"
        case "slow_close": text = "slow-close:\(attribute("delay"))ms"
        case "timeout": text = "timeout:\(attribute("timeout"))ms"
        case "slicer":
            let size = max(1, attribute("average_size"))
            text = "slicer,size=\(size),variation=\(min(attribute("size_variation"), size - 1)),delay=\(attribute("delay"))us"
        case "limit_data": text = "limit-data:\(attribute("bytes"))"
        default:
            let timeout = attribute("timeout")
            text = timeout > 0 ? "reset,after=\(timeout)ms" : "reset"
        }
        if type != "reset_peer" { text += stream == "upstream" ? ",dir=c2s" : ",dir=s2c" }
        if toxicity < 1 { text += ",prob=\(toxicity)" }
        return text
    }

    /// The rule, checked by the same parser as `--fault`.
    public func rule() -> Result<FaultRule, ToxiproxyFailure> {
        do { return .success(try FaultRule.parse(ruleText)) } catch {
            return .failure(.bad("toxic \(name) (\(type)) cannot be served: \(error.message)"))
        }
    }

    public var json: JSONValue {
        .object(JSONObject([
            ("name", .string(name)), ("type", .string(type)), ("stream", .string(stream)),
            ("toxicity", .double(toxicity)),
            ("attributes", .object(JSONObject(attributes.map { ($0.key, JSONValue.int($0.value)) }))),
        ]))
    }
}

/// Why a toxiproxy request cannot be done, with its HTTP status.
public enum ToxiproxyFailure: Error, Sendable, Hashable {
    case bad(String)
    case notFound(String)
    case conflict(String)

    public var response: ControlResponse {
        switch self {
        case .bad(let m): .error(400, m)
        case .notFound(let m): .error(404, m)
        case .conflict(let m): .error(409, m)
        }
    }
}
