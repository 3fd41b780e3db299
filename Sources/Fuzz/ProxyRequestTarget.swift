import ProxyCore
import ProxyShell
import WebSocket

extension FuzzTarget {
    /// The proxy's request routing: a request head (in pieces) through the forward proxy's
    /// router (CONNECT, absolute-form URLs) and through `--route` selection, whose table is
    /// built from the same bytes' lines as `HOST[/PATH]=ws[s]://HOST:PORT[/PATH]` flags.
    static let proxyRequest = FuzzTarget(
        name: "proxy-request",
        summary: "forward proxy routing (CONNECT, absolute-form), --route parsing and selection, upstream URLs") { input in
        guard let flags = input.first else { return }
        let body = UnsafeRawBufferPointer(rebasing: input[1...])

        // --route flags: each line of the input read as one.
        var table: [UpstreamRoutes.Route] = []
        for line in body.split(separator: 10).prefix(16) {
            let text = String(decoding: line, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            if let route = UpstreamRoutes.parseMatch(String(text[..<equals])) {
                require(!route.host.isEmpty, "a route matched an empty host")
                table.append(route)
            }
            checkUpstream(String(text[text.index(after: equals)...]))
        }
        let routes = UpstreamRoutes(table)

        var parser = HTTPHeadParser(maxHeadBytes: 4096)
        var chunks = InputChunks(body, seed: flags)
        while let chunk = chunks.next() {
            parser.append(chunk)
            let head: HTTPRequestHead
            do {
                guard let parsed = try parser.parseRequest() else { continue }
                head = parsed
            } catch {
                return
            }
            if let index = routes.select(host: head.headers.first(named: "Host"), target: head.target) {
                require(table.indices.contains(index), "route \(index) of \(table.count)")
            }
            checkForwardRoute(head)
            _ = ProxyRequestRouter.looksLikeTLS(parser.remainder)
            return
        }
    }

    /// The router's answer keeps its promises: a usable target, an origin-form request
    /// without the proxy's own headers and with a `Host`, or a 400.
    private static func checkForwardRoute(_ head: HTTPRequestHead) {
        switch ProxyRequestRouter.route(head) {
        case .connect(let target):
            checkTarget(target)
        case .forward(let target, let request):
            checkTarget(target)
            require(request.target.hasPrefix("/"), "forwarded target '\(request.target)' is not origin-form")
            require(request.headers.contains { $0.name.lowercased() == "host" }, "forwarded request without Host")
            require(!request.headers.contains { ["proxy-connection", "proxy-authorization", "keep-alive"].contains($0.name.lowercased()) },
                    "a proxy header was forwarded")
            _ = ProxyRequestRouter.isPassthrough(target.host, patterns: ["*.example.com", target.host])
        case .reject(let status, _):
            require(status == 400, "rejected with \(status)")
        }
    }

    private static func checkTarget(_ target: ForwardTarget) {
        require(!target.host.isEmpty, "empty host")
        require((1...65535).contains(target.port), "port \(target.port)")
        require(target.host == target.host.lowercased(), "host '\(target.host)' not lower-cased")
        // The authority written back parses to the same target.
        if !target.host.contains("[") && !target.host.contains("]") {
            let again = ProxyRequestRouter.parseAuthority(target.authority, defaultPort: nil, secure: target.secure)
            require(again == target, "'\(target.authority)' parsed again as \(String(describing: again))")
        }
    }

    /// An upstream URL that parses prints as a URL that parses to the same value.
    private static func checkUpstream(_ text: String) {
        guard case .success(let url) = UpstreamURL.parse(text) else { return }
        require((1...65535).contains(url.port), "upstream port \(url.port)")
        if case .success(let again) = UpstreamURL.parse(url.description) {
            require(again == url, "'\(url.description)' parsed again as \(again)")
        } else {
            require(false, "'\(url.description)' (from '\(text)') does not parse")
        }
    }
}
