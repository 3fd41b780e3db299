import JSON

/// A subset of toxiproxy's REST API (its clients work unchanged), served by `faultline proxy
/// --toxiproxy-api HOST:PORT`. Pure: a request and a backend in, a response out.
///
///     GET    /version                         {"version": "..."}
///     GET    /proxies                         {"NAME": PROXY, ...}
///     POST   /proxies                         {"name","listen","upstream","enabled"} -> 201 PROXY, 409 if it exists
///     GET    /proxies/{name}                  PROXY
///     POST   /proxies/{name}                  {"enabled": false} -> PROXY
///     DELETE /proxies/{name}                  204
///     GET    /proxies/{name}/toxics           [TOXIC, ...]
///     POST   /proxies/{name}/toxics           TOXIC -> 200 TOXIC, 409 if the name is taken
///     GET    /proxies/{name}/toxics/{toxic}   TOXIC
///     POST   /proxies/{name}/toxics/{toxic}   changed members -> TOXIC
///     DELETE /proxies/{name}/toxics/{toxic}   204
///     POST   /reset                           204: every proxy enabled, every toxic removed
///
/// PROXY is `{"name","listen","upstream","enabled","toxics"}`; errors are
/// `{"error": MESSAGE, "status": N}` with 400, 404, 405 or 409.
public struct ToxiproxyRouter: Sendable {
    /// Bounds on what clients may create: each proxy is a listener, each toxic a rule.
    public static let maxProxies = 256
    public static let maxToxicsPerProxy = 64
    /// Same access rules as the control API: loopback `Host` only, no browsers.
    let access: ControlRouter
    /// Proxies may listen on addresses other than loopback (`--control-allow-remote`).
    let allowRemoteListens: Bool

    public init(loopbackOnly: Bool = true, allowRemoteListens: Bool = false) {
        access = ControlRouter(token: nil, loopbackOnly: loopbackOnly)
        self.allowRemoteListens = allowRemoteListens
    }

    public func respond(to request: ControlRequest, backend: any ToxiproxyBackend) -> ControlResponse {
        if let refusal = access.checkAccess(request) { return refusal }
        var parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "" else { return .error(404, "no such resource '\(request.path)'") }
        parts.removeFirst()
        if parts.count > 1, parts.last == "" { parts.removeLast() }
        let method = request.method
        func allow(_ methods: String...) -> ControlResponse? {
            methods.contains(method) ? nil : .error(405, "\(method) is not allowed on \(request.path) (allowed: \(methods.joined(separator: ", ")))")
        }
        switch parts.count {
        case 1 where parts[0] == "version":
            if let refused = allow("GET") { return refused }
            return .json(200, ["version": .string(backend.version)])
        case 1 where parts[0] == "reset":
            if let refused = allow("POST") { return refused }
            for proxy in backend.proxies() {
                if !proxy.enabled { _ = backend.setEnabled(true, proxy: proxy.name) }
                _ = backend.setToxics([], proxy: proxy.name)
            }
            return ControlResponse(status: 204)
        case 1 where parts[0] == "proxies":
            if let refused = allow("GET", "POST") { return refused }
            if method == "GET" {
                return .json(200, .object(JSONObject(backend.proxies().map { ($0.name, $0.json) })))
            }
            return createProxy(request.body, backend)
        case 2 where parts[0] == "proxies":
            if let refused = allow("GET", "POST", "DELETE") { return refused }
            guard let proxy = backend.proxies().first(where: { $0.name == parts[1] }) else { return noProxy(parts[1]) }
            switch method {
            case "GET": return .json(200, proxy.json)
            case "DELETE": return backend.deleteProxy(name: proxy.name) ? ControlResponse(status: 204) : noProxy(proxy.name)
            default:
                guard case .object(let body)? = try? JSONParser.parse(request.body) else {
                    return .error(400, "the body must be a JSON object, e.g. {\"enabled\": false}")
                }
                if let listen = body["listen"]?.stringValue, listen != proxy.listen {
                    return .error(400, "changing listen is not supported; delete and create the proxy")
                }
                if let upstream = body["upstream"]?.stringValue, upstream != proxy.upstream {
                    return .error(400, "changing upstream is not supported; delete and create the proxy")
                }
                guard let enabled = body["enabled"]?.boolValue, enabled != proxy.enabled else { return .json(200, proxy.json) }
                return result(backend.setEnabled(enabled, proxy: proxy.name)) { .json(200, $0.json) }
            }
        case 3 where parts[0] == "proxies" && parts[2] == "toxics":
            if let refused = allow("GET", "POST") { return refused }
            guard let proxy = backend.proxies().first(where: { $0.name == parts[1] }) else { return noProxy(parts[1]) }
            if method == "GET" { return .json(200, .array(proxy.toxics.map(\.json))) }
            guard let body = try? JSONParser.parse(request.body) else { return .error(400, "the body is not JSON") }
            let toxic: ToxiproxyToxic
            switch ToxiproxyToxic.parse(body) {
            case .success(let parsed): toxic = parsed
            case .failure(let failure): return failure.response
            }
            if proxy.toxics.contains(where: { $0.name == toxic.name }) {
                return .error(409, "toxic already exists: \(toxic.name)")
            }
            guard proxy.toxics.count < Self.maxToxicsPerProxy else {
                return .error(400, "proxy \(proxy.name) has \(Self.maxToxicsPerProxy) toxics, the most Faultline keeps; delete one first")
            }
            return result(backend.setToxics(proxy.toxics + [toxic], proxy: proxy.name)) { _ in .json(200, toxic.json) }
        case 4 where parts[0] == "proxies" && parts[2] == "toxics":
            if let refused = allow("GET", "POST", "DELETE") { return refused }
            guard let proxy = backend.proxies().first(where: { $0.name == parts[1] }) else { return noProxy(parts[1]) }
            guard let index = proxy.toxics.firstIndex(where: { $0.name == parts[3] }) else {
                return .error(404, "toxic not found: \(parts[3])")
            }
            switch method {
            case "GET": return .json(200, proxy.toxics[index].json)
            case "DELETE":
                var toxics = proxy.toxics
                toxics.remove(at: index)
                return result(backend.setToxics(toxics, proxy: proxy.name)) { _ in ControlResponse(status: 204) }
            default:
                guard let body = try? JSONParser.parse(request.body) else { return .error(400, "the body is not JSON") }
                var toxics = proxy.toxics
                switch ToxiproxyToxic.parse(body, updating: toxics[index]) {
                case .success(var updated):
                    updated.name = toxics[index].name
                    updated.type = toxics[index].type
                    toxics[index] = updated
                case .failure(let failure): return failure.response
                }
                let updated = toxics[index]
                return result(backend.setToxics(toxics, proxy: proxy.name)) { _ in .json(200, updated.json) }
            }
        default:
            return .error(404, "no such resource '\(request.path)' (toxiproxy API: /version, /proxies, /proxies/NAME, /proxies/NAME/toxics, /proxies/NAME/toxics/TOXIC, /reset)")
        }
    }

    func createProxy(_ bytes: [UInt8], _ backend: any ToxiproxyBackend) -> ControlResponse {
        guard case .object(let body)? = try? JSONParser.parse(bytes) else { return .error(400, "the body must be a JSON object") }
        guard let name = body["name"]?.stringValue else { return .error(400, "missing proxy name") }
        if let problem = ToxiproxyNames.problem(name, what: "proxy") { return .error(400, problem) }
        guard let upstream = body["upstream"]?.stringValue else { return .error(400, "missing upstream") }
        if let problem = ToxiproxyNames.upstreamProblem(upstream) { return .error(400, problem) }
        let proxies = backend.proxies()
        if proxies.contains(where: { $0.name == name }) { return .error(409, "proxy already exists") }
        guard proxies.count < Self.maxProxies else {
            return .error(400, "\(Self.maxProxies) proxies exist, the most Faultline serves; delete one first")
        }
        let listen = body["listen"]?.stringValue ?? "127.0.0.1:0"
        if let problem = ToxiproxyNames.listenProblem(listen, allowRemote: allowRemoteListens) { return .error(400, problem) }
        let enabled = body["enabled"]?.boolValue ?? true
        return result(backend.createProxy(name: name, listen: listen, upstream: upstream, enabled: enabled)) {
            .json(201, $0.json)
        }
    }

    func noProxy(_ name: String) -> ControlResponse { .error(404, "proxy not found: \(name)") }

    func result<T>(_ result: Result<T, ToxiproxyFailure>, _ success: (T) -> ControlResponse) -> ControlResponse {
        switch result {
        case .success(let value): success(value)
        case .failure(let failure): failure.response
        }
    }
}
