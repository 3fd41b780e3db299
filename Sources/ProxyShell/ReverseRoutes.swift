import JSON
import ProxyCore

/// `--route HOST[/PATH]=UPSTREAM` (repeatable): several upstreams behind one reverse proxy,
/// chosen per request by its `Host` and path (`UpstreamRoutes` decides); `--upstream`, when
/// also given, takes the requests no route matches. Read from the command line by the
/// executable's `ReverseRouteOptions`.
package struct ReverseRoutes: Sendable {
    package init() {}

    package var table = UpstreamRoutes([])
    package var upstreams: [UpstreamURL] = []
    /// `--upstream` was given too: unmatched requests go there.
    package var hasDefault = false
    package var isEmpty: Bool { upstreams.isEmpty }

    /// The routes in the capture header, as written on the command line.
    package func describe(into object: inout JSONObject) {
        guard !isEmpty else { return }
        object["routes"] = .array(zip(table.routes, upstreams).map { route, upstream in
            .string("\(route.host)\(route.path ?? "")=\(upstream)")
        })
        if !hasDefault { object["upstream"] = .string("routes") }
    }
}
