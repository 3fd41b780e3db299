import Testing
@testable import ProxyCore

/// `--route HOST[/PATH]=UPSTREAM`: which route a request's Host and path pick.
@Suite struct UpstreamRoutesTests {
    let routes = UpstreamRoutes([
        UpstreamRoutes.parseMatch("chat.example.com")!,
        UpstreamRoutes.parseMatch("chat.example.com/ws/admin/")!,
        UpstreamRoutes.parseMatch("chat.example.com/ws")!,
        UpstreamRoutes.parseMatch("*.eu.example.com")!,
        UpstreamRoutes.parseMatch("local.test:8080")!,
    ])

    @Test func hostThenLongestPathPrefixAtASegmentBoundary() {
        #expect(routes.select(host: "chat.example.com", target: "/app/key") == 0)
        #expect(routes.select(host: "CHAT.example.com:443", target: "/ws?x=1") == 2)
        #expect(routes.select(host: "chat.example.com", target: "/ws/room") == 2)
        #expect(routes.select(host: "chat.example.com", target: "/ws/admin/x") == 1)
        #expect(routes.select(host: "chat.example.com", target: "/wsx") == 0, "not a segment boundary")
        #expect(routes.select(host: "a.eu.example.com", target: "/") == 3)
        #expect(routes.select(host: "eu.example.com", target: "/") == nil)
        #expect(routes.select(host: "local.test:8080", target: "/") == 4)
        #expect(routes.select(host: "local.test:9090", target: "/") == nil, "a route with a port wants that port")
        #expect(routes.select(host: nil, target: "/") == nil)
    }

    @Test func matchParsing() {
        #expect(UpstreamRoutes.parseMatch("Host.Test/a/b/") == UpstreamRoutes.Route(host: "host.test", path: "/a/b"))
        #expect(UpstreamRoutes.parseMatch("h/") == UpstreamRoutes.Route(host: "h", path: nil))
        #expect(UpstreamRoutes.parseMatch("/path") == nil)
        #expect(UpstreamRoutes.parseMatch("") == nil)
    }
}
