/// The control API's resources, matched from a request path. Unknown paths are 404; a
/// known path with a method it does not take is 405 with `Allow`.
enum ControlRoute: Equatable {
    case health
    case connections
    case rules
    case rule(Int)
    case apply(connection: Int)
    case reset
    case metrics
    /// `GET /events`: a stream of JSON lines, served by `ControlServer` itself.
    case events
    /// `/intercept`, `/intercept/resume`, `/intercept/{conn}/{id}` (`InterceptEndpoints`).
    case intercept
    case interceptResume
    case interceptDecision(connection: Int, id: Int)

    /// The methods each resource takes, for `Allow` and the 405 message.
    var methods: [String] {
        switch self {
        case .health, .connections, .metrics, .events: ["GET"]
        case .rules: ["GET", "POST"]
        case .rule: ["GET", "DELETE"]
        case .apply, .reset, .interceptResume, .interceptDecision: ["POST"]
        case .intercept: ["GET", "POST"]
        }
    }

    /// The route for a path (a trailing slash is ignored), or nil.
    init?(path: String) {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "" else { return nil }   // must start with "/"
        parts.removeFirst()
        if parts.count > 1, parts.last == "" { parts.removeLast() }
        switch parts.count {
        case 1:
            switch parts[0] {
            case "health": self = .health
            case "connections": self = .connections
            case "rules": self = .rules
            case "reset": self = .reset
            case "metrics": self = .metrics
            case "events": self = .events
            case "intercept": self = .intercept
            default: return nil
            }
        case 2 where parts[0] == "rules":
            guard let id = ControlRoute.number(parts[1]) else { return nil }
            self = .rule(id)
        case 2 where parts[0] == "intercept" && parts[1] == "resume":
            self = .interceptResume
        case 3 where parts[0] == "intercept":
            guard let conn = ControlRoute.number(parts[1]), let id = ControlRoute.number(parts[2]) else { return nil }
            self = .interceptDecision(connection: conn, id: id)
        case 3 where parts[0] == "connections" && parts[2] == "apply":
            guard let id = ControlRoute.number(parts[1]) else { return nil }
            self = .apply(connection: id)
        default:
            return nil
        }
    }

    /// A plain decimal id (no sign, no spaces), small enough for an Int.
    static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }
}
