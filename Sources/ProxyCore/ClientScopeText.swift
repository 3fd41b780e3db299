import WebSocket

/// The text a fault rule's `client=TEXT` scope is looked for in: the upgrade request's
/// User-Agent and target. (Not the analyzer's client key, `ClientKeyMode`, which groups
/// connections into clients.)
public enum ClientScopeText {
    /// "Mozilla/5.0 ... /app/key?protocol=7&client=js" (User-Agent "-" when absent).
    public static func derive(from request: HTTPRequestHead) -> String {
        (request.headers.first(named: "User-Agent") ?? "-") + " " + request.target
    }
}
