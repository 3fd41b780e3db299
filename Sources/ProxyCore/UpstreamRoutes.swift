import Vocabulary

/// The reverse proxy's `--route HOST[/PATH]=UPSTREAM` table: which upstream a request goes
/// to, chosen by its `Host` and path. Pure; the shell keeps the upstreams, this picks an index.
///
/// A route matches when its host equals the request's `Host` (case-insensitive; the port is
/// ignored unless the route names one; `*.example.com` for every name under example.com)
/// and its path, if any, is a prefix of the request's path at a segment boundary (`/chat`
/// matches `/chat` and `/chat/x`, not `/chatter`). The longest matching path wins, then the
/// first route given.
public struct UpstreamRoutes: Sendable, Hashable {
    public struct Route: Sendable, Hashable {
        public var host: String
        public var path: String?

        public init(host: String, path: String?) {
            self.host = host.lowercased()
            self.path = path
        }
    }

    public var routes: [Route]

    public init(_ routes: [Route]) { self.routes = routes }

    /// Parses the `HOST[/PATH]` side of a `--route`: nil when the host is empty.
    public static func parseMatch(_ text: String) -> Route? {
        let slash = text.firstIndex(of: "/") ?? text.endIndex
        let host = String(text[..<slash])
        var path = String(text[slash...])
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        guard !host.isEmpty, !host.contains(" "), !host.contains("@") else { return nil }
        return Route(host: host, path: path.isEmpty || path == "/" ? nil : path)
    }

    /// The index of the route for a request with this `Host` header and target, or nil.
    public func select(host: String?, target: String) -> Int? {
        guard let host else { return nil }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        var best: (index: Int, length: Int)?
        for (index, route) in routes.enumerated() where HostPattern.matches(route.host, hostHeader: host) {
            let length: Int
            if let prefix = route.path {
                guard path == prefix || path.hasPrefix(prefix + "/") else { continue }
                length = prefix.count
            } else {
                length = 0
            }
            if best == nil || length > best!.length { best = (index, length) }
        }
        return best?.index
    }
}
