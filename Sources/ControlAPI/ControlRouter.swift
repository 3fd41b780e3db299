import Faults
import JSON
import WebSocket

/// The control API's decisions, pure: a request and a backend in, a response out. The
/// `ControlServer` only moves bytes; everything an endpoint does is here, so it can be
/// tested without sockets. Endpoints (toxiproxy's API is the model):
///
///     GET    /health                   {"status":"ok"}
///     GET    /connections              {"connections":[...]}
///     GET    /rules                    {"rules":[{"id":1,"rule":"close:4009,after=5s","kind":"close"}]}
///     POST   /rules                    body {"rule":"..."} or the rule as text -> 201 {"id","rule","kind"}
///     GET    /rules/{id}               {"id","rule","kind"}
///     DELETE /rules/{id}               {"removed":{"id","rule","kind"}}
///     POST   /connections/{id}/apply   body as for POST /rules -> {"connection","rule","kind"}
///     POST   /reset                    {"removed":N}
///     GET    /metrics                  Prometheus text format 0.0.4
///     GET    /events                   JSON lines as things happen (see `ControlServer`)
///     GET    /intercept                and POST /intercept, /intercept/resume, /intercept/{conn}/{id}:
///                                      pause connections, decide on held messages (`InterceptEndpoints`)
///
/// Errors are `{"error": "...", "status": N}`; a refused rule adds `rule`, `column`,
/// `length` and `detail` (the message with a caret line under the bad part).
public struct ControlRouter: Sendable {
    /// When set, every request needs `Authorization: Bearer <token>` (else 401).
    public var token: String?
    /// When true (the server listens on loopback only), a request whose `Host` is not a
    /// loopback name is refused with 403: a web page cannot reach the API through DNS
    /// rebinding. Requests carrying `Origin` (sent by browsers) are refused in any case.
    public var loopbackOnly: Bool

    public init(token: String?, loopbackOnly: Bool = true) {
        self.token = token
        self.loopbackOnly = loopbackOnly
    }

    public func respond(to request: ControlRequest, backend: any ControlBackend) -> ControlResponse {
        if let refusal = checkAccess(request) { return refusal }
        guard let route = ControlRoute(path: request.path) else {
            return .error(404, "no such resource '\(request.path)' (resources: /health, /connections, /connections/ID/apply, /rules, /rules/ID, /reset, /metrics, /events, /intercept)")
        }
        guard route.methods.contains(request.method) else {
            let allowed = route.methods.joined(separator: ", ")
            return .error(405, "\(request.method) is not allowed on \(request.path) (allowed: \(allowed))",
                          headers: [HeaderField("Allow", allowed)])
        }
        let endpoints = ControlEndpoints(backend: backend)
        switch (request.method, route) {
        case (_, .health): return .json(200, ["status": "ok"])
        case (_, .connections): return endpoints.connections()
        case ("GET", .rules): return endpoints.listRules()
        case (_, .rules): return endpoints.addRule(body: request.body)
        case ("GET", .rule(let id)): return endpoints.rule(id)
        case (_, .rule(let id)): return endpoints.removeRule(id)
        case (_, .apply(let connection)): return endpoints.apply(to: connection, body: request.body)
        case (_, .reset): return endpoints.reset()
        case (_, .metrics): return endpoints.metrics()
        case (_, .events): return .error(501, "GET /events streams; this server cannot stream")
        case ("GET", .intercept): return InterceptEndpoints(backend: backend).list()
        case (_, .intercept): return InterceptEndpoints(backend: backend).pause(body: request.body)
        case (_, .interceptResume): return InterceptEndpoints(backend: backend).resume(body: request.body)
        case (_, .interceptDecision(let conn, let id)):
            return InterceptEndpoints(backend: backend).decide(connection: conn, id: id, body: request.body)
        }
    }

    /// 401 without the right token, 403 for browsers and non-loopback `Host`s; nil to go on.
    func checkAccess(_ request: ControlRequest) -> ControlResponse? {
        if let token {
            let given = request.headers.first(named: "Authorization") ?? ""
            let prefix = "Bearer "
            let presented = given.hasPrefix(prefix) ? String(given.dropFirst(prefix.count)) : nil
            guard let presented, ControlRouter.constantTimeEqual(presented, token) else {
                let message = given.isEmpty ? "this control API needs 'Authorization: Bearer TOKEN'"
                                            : "wrong token in 'Authorization' (expected 'Bearer TOKEN')"
                return .error(401, message, headers: [HeaderField("WWW-Authenticate", "Bearer realm=\"faultline\"")])
            }
        }
        if request.headers.first(named: "Origin") != nil {
            return .error(403, "requests from web pages (with an Origin header) are refused")
        }
        if loopbackOnly, let host = request.headers.first(named: "Host"), !LoopbackHost.isLoopback(hostHeader: host) {
            return .error(403, "Host '\(host)' is not a loopback address; this control API serves loopback clients only")
        }
        return nil
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    package static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return difference == 0
    }
}
