import JSON

/// One proxy as toxiproxy's API shows it.
public struct ToxiproxyProxy: Sendable, Hashable {
    public var name: String
    /// The bound address ("127.0.0.1:43123"), or the requested one while disabled.
    public var listen: String
    public var upstream: String
    public var enabled: Bool
    public var toxics: [ToxiproxyToxic]

    public init(name: String, listen: String, upstream: String, enabled: Bool, toxics: [ToxiproxyToxic] = []) {
        self.name = name
        self.listen = listen
        self.upstream = upstream
        self.enabled = enabled
        self.toxics = toxics
    }

    public var json: JSONValue {
        .object(JSONObject([("name", .string(name)), ("listen", .string(listen)), ("upstream", .string(upstream)),
                            ("enabled", .bool(enabled)), ("toxics", .array(toxics.map(\.json)))]))
    }
}

/// What the toxiproxy-compatible API changes: proxies that listen, relay and record, each
/// with its toxics installed as fault rules. The executable implements it with one
/// `ProxyServer` per proxy; tests use a fake. Called on the loop thread only.
public protocol ToxiproxyBackend: AnyObject {
    /// Every proxy, by name.
    func proxies() -> [ToxiproxyProxy]
    /// Starts a proxy listening on `listen` (port 0: any) towards `upstream`.
    func createProxy(name: String, listen: String, upstream: String, enabled: Bool) -> Result<ToxiproxyProxy, ToxiproxyFailure>
    /// Enables or disables (stops listening, drops its connections) a proxy.
    func setEnabled(_ enabled: Bool, proxy name: String) -> Result<ToxiproxyProxy, ToxiproxyFailure>
    /// Stops and forgets a proxy; false when there is none of that name.
    func deleteProxy(name: String) -> Bool
    /// Replaces a proxy's toxics (each installed as its rule; open connections get them at once).
    func setToxics(_ toxics: [ToxiproxyToxic], proxy name: String) -> Result<Void, ToxiproxyFailure>
    /// "faultline X.Y.Z", for `GET /version`.
    var version: String { get }
}
