import ControlAPI
import JSON
import Testing
import WebSocket

/// What a toxiproxy client may name and point at. A proxy's name becomes part of its
/// capture's file name, its upstream URL goes into the request line sent upstream, and its
/// listen address decides who can reach it: each is checked before the backend sees it.
@Suite struct ToxiproxyValidationTests {
    func call(_ router: ToxiproxyRouter, _ method: String, _ path: String, _ body: JSONValue,
              _ backend: FakeToxiproxy) -> ControlResponse {
        router.respond(to: ControlRequest(method: method, target: path, headers: [HeaderField("Host", "localhost:8474")],
                                          body: Array(JSONWriter.serialize(body).utf8)), backend: backend)
    }

    func create(_ name: String, upstream: String = "127.0.0.1:9000", listen: String? = nil,
                router: ToxiproxyRouter = ToxiproxyRouter(), _ backend: FakeToxiproxy) -> ControlResponse {
        var members: [(String, JSONValue)] = [("name", .string(name)), ("upstream", .string(upstream))]
        if let listen { members.append(("listen", .string(listen))) }
        return call(router, "POST", "/proxies", .object(JSONObject(members)), backend)
    }

    @Test(arguments: ["jsonl\u{0}", "a\u{0}b", "a\u{1B}]0;owned\u{7}", "a b", "a.b", "../x", "a/b", "-",
                      "caf\u{E9}", "a\u{202E}b", String(repeating: "a", count: ToxiproxyNames.maxLength + 1), ""])
    func unsafeProxyNamesAreRefused(name: String) {
        let backend = FakeToxiproxy()
        let response = create(name, backend)
        #expect(response.status == 400)
        #expect(response.jsonBody?["error"]?.stringValue?.contains("letters, digits") == true)
        #expect(backend.calls.isEmpty)
    }

    @Test(arguments: ["redis", "redis_master-2", "A9", String(repeating: "z", count: ToxiproxyNames.maxLength)])
    func safeProxyNamesAreAccepted(name: String) {
        let backend = FakeToxiproxy()
        #expect(create(name, backend).status == 201)
        #expect(backend.calls == ["create \(name)"])
    }

    @Test func unsafeToxicNamesAreRefused() {
        let backend = FakeToxiproxy()
        #expect(create("p", backend).status == 201)
        for name in ["x\u{1B}[2J", "t\r\nX: y", "a\u{9B}b"] {
            let body = JSONValue.object(JSONObject([("name", .string(name)), ("type", .string("timeout"))]))
            #expect(call(ToxiproxyRouter(), "POST", "/proxies/p/toxics", body, backend).status == 400)
        }
        #expect(backend.table["p"]?.toxics.isEmpty == true)
    }

    @Test(arguments: ["127.0.0.1:9000/a\r\nX-Injected: 1", "ws://127.0.0.1:9000/a\nb", "127.0.0.1:9000/\u{0}",
                      "127.0.0.1:9000/a b", "127.0.0.1:9000/\u{85}", "127.0.0.1:9000/\u{7F}", "127.0.0.1:9000/caf\u{E9}",
                      "127.0.0.1:9000\t"])
    func upstreamsWithControlsAreRefused(upstream: String) {
        let backend = FakeToxiproxy()
        let response = create("p", upstream: upstream, backend)
        #expect(response.status == 400)
        #expect(response.jsonBody?["error"]?.stringValue?.hasPrefix("upstream: ") == true)
        #expect(backend.calls.isEmpty)
    }

    @Test(arguments: ["0.0.0.0:0", "[::]:0", "192.0.2.1:8000", "example.com:0"])
    func nonLoopbackListensAreRefusedUnlessAllowed(listen: String) {
        let backend = FakeToxiproxy()
        let refused = create("p", listen: listen, backend)
        #expect(refused.status == 400)
        #expect(refused.jsonBody?["error"]?.stringValue?.contains("--control-allow-remote") == true)
        #expect(backend.calls.isEmpty)
        #expect(create("p", listen: listen, router: ToxiproxyRouter(allowRemoteListens: true), backend).status == 201)
    }

    @Test(arguments: ["127.0.0.1:0", "localhost:26379", "[::1]:0", "127.0.0.2:9"])
    func loopbackListensAreAccepted(listen: String) {
        #expect(create("p", listen: listen, FakeToxiproxy()).status == 201)
    }

    @Test func badListenTextIsRefused() {
        let response = create("p", listen: "127.0.0.1:0\r\n", FakeToxiproxy())
        #expect(response.status == 400 && response.jsonBody?["error"]?.stringValue?.hasPrefix("listen: ") == true)
    }
}
