import CLI
import ProxyCore
import ProxyShell

/// The proxy's `--route HOST[/PATH]=UPSTREAM` flag (repeatable) read into `ReverseRoutes`.
enum ReverseRouteOptions {
    static let option = OptionSpec("route", value: "host[/path]=url",
                                   help: "Send requests for HOST (and a PATH prefix) to this ws[s]:// upstream; repeatable; --upstream then takes the rest (without it they get 404).",
                                   repeatable: true)

    static func parse(_ arguments: ParsedArguments, command: String, forward: Bool) throws(UsageError) -> ReverseRoutes {
        let texts = arguments.all("route")
        if forward, !texts.isEmpty { throw UsageError("\(command): --route applies to the reverse proxy, not --forward") }
        var routes = ReverseRoutes()
        var table: [UpstreamRoutes.Route] = []
        for text in texts {
            guard let equals = text.firstIndex(of: "="), let match = UpstreamRoutes.parseMatch(String(text[..<equals])) else {
                throw UsageError("\(command): --route '\(text)': expected HOST[/PATH]=ws[s]://HOST:PORT[/PATH], such as chat.example.com/ws=ws://127.0.0.1:6001")
            }
            switch UpstreamURL.parse(String(text[text.index(after: equals)...])) {
            case .success(let upstream):
                table.append(match)
                routes.upstreams.append(upstream)
            case .failure(let error):
                throw UsageError("\(command): --route '\(text)': \(error)")
            }
        }
        routes.table = UpstreamRoutes(table)
        return routes
    }
}
