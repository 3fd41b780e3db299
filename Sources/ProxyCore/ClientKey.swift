import WebSocket

/// The key `client=KEY` fault scopes match against: the request's User-Agent and target.
public enum ClientKey {
    /// "Mozilla/5.0 ... /app/key?protocol=7&client=js" (User-Agent "-" when absent).
    public static func derive(from request: HTTPRequestHead) -> String {
        (request.headers.first(named: "User-Agent") ?? "-") + " " + request.target
    }
}
