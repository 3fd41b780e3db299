import ControlAPI
import Faults
import JSON
import Testing
import WebSocket

/// A toxiproxy stand-in backend: proxies in a dictionary, every call logged.
final class FakeToxiproxy: ToxiproxyBackend {
    var table: [String: ToxiproxyProxy] = [:]
    var calls: [String] = []
    let version = "faultline test"

    func proxies() -> [ToxiproxyProxy] { table.keys.sorted().compactMap { table[$0] } }

    func createProxy(name: String, listen: String, upstream: String, enabled: Bool) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        calls.append("create \(name)")
        let proxy = ToxiproxyProxy(name: name, listen: listen.replacingPortZero(), upstream: upstream, enabled: enabled)
        table[name] = proxy
        return .success(proxy)
    }

    func setEnabled(_ enabled: Bool, proxy name: String) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        calls.append("\(enabled ? "enable" : "disable") \(name)")
        table[name]?.enabled = enabled
        return table[name].map { .success($0) } ?? .failure(.notFound(name))
    }

    func deleteProxy(name: String) -> Bool { table.removeValue(forKey: name) != nil }

    func setToxics(_ toxics: [ToxiproxyToxic], proxy name: String) -> Result<Void, ToxiproxyFailure> {
        calls.append("toxics \(name) \(toxics.map(\.ruleText))")
        table[name]?.toxics = toxics
        return .success(())
    }
}

extension String {
    func replacingPortZero() -> String { hasSuffix(":0") ? String(dropLast(2)) + ":40001" : self }
}

/// toxiproxy's API as its documentation gives the bodies and statuses.
@Suite struct ToxiproxyRouterTests {
    let router = ToxiproxyRouter()

    func call(_ method: String, _ path: String, _ body: String = "", _ backend: FakeToxiproxy) -> ControlResponse {
        router.respond(to: ControlRequest(method: method, target: path, headers: [HeaderField("Host", "localhost:8474")],
                                          body: Array(body.utf8)), backend: backend)
    }

    @Test func proxiesAreCreatedListedUpdatedAndDeleted() throws {
        let backend = FakeToxiproxy()
        let created = call("POST", "/proxies", #"{"name":"redis","listen":"127.0.0.1:0","upstream":"127.0.0.1:6379"}"#, backend)
        #expect(created.status == 201)
        #expect(String(decoding: created.body, as: UTF8.self)
                == #"{"name":"redis","listen":"127.0.0.1:40001","upstream":"127.0.0.1:6379","enabled":true,"toxics":[]}"# + "\n")
        #expect(call("POST", "/proxies", #"{"name":"redis","upstream":"127.0.0.1:1"}"#, backend).status == 409)
        #expect(call("POST", "/proxies", #"{"upstream":"127.0.0.1:1"}"#, backend).status == 400)
        let list = call("GET", "/proxies", "", backend).jsonBody
        #expect(list?["redis"]?["upstream"]?.stringValue == "127.0.0.1:6379")
        #expect(call("GET", "/proxies/nope", "", backend).status == 404)
        let disabled = call("POST", "/proxies/redis", #"{"enabled":false}"#, backend)
        #expect(disabled.status == 200 && disabled.jsonBody?["enabled"]?.boolValue == false)
        #expect(backend.calls.last == "disable redis")
        #expect(call("DELETE", "/proxies/redis", "", backend).status == 204)
        #expect(call("DELETE", "/proxies/redis", "", backend).status == 404)
        #expect(call("PUT", "/proxies", "", backend).status == 405)
    }

    @Test func toxicsBecomeFaultRules() throws {
        let backend = FakeToxiproxy()
        _ = call("POST", "/proxies", #"{"name":"ws","upstream":"127.0.0.1:9000"}"#, backend)
        let added = call("POST", "/proxies/ws/toxics", #"{"type":"latency","attributes":{"latency":1000,"jitter":50}}"#, backend)
        #expect(added.status == 200)
        #expect(String(decoding: added.body, as: UTF8.self)
                == #"{"name":"latency_downstream","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":1000,"jitter":50}}"# + "\n")
        #expect(backend.calls.last == #"toxics ws ["latency:1000ms,jitter=50ms,dir=s2c"]"#)
        #expect(call("POST", "/proxies/ws/toxics", #"{"type":"latency"}"#, backend).status == 409)
        let updated = call("POST", "/proxies/ws/toxics/latency_downstream", #"{"attributes":{"jitter":0}}"#, backend)
        #expect(updated.jsonBody?["attributes"]?["latency"]?.intValue == 1000)
        #expect(updated.jsonBody?["attributes"]?["jitter"]?.intValue == 0)
        #expect(call("GET", "/proxies/ws/toxics", "", backend).jsonBody?.arrayValue?.count == 1)
        #expect(call("DELETE", "/proxies/ws/toxics/latency_downstream", "", backend).status == 204)
        #expect(call("GET", "/proxies/ws/toxics/latency_downstream", "", backend).status == 404)
        #expect(call("POST", "/proxies/ws/toxics", #"{"type":"explode"}"#, backend).status == 400)
        #expect(call("POST", "/proxies/ws/toxics", #"{"type":"latency","attributes":{"nope":1}}"#, backend).status == 400)
    }

    @Test func everyToxicTypeMapsOntoAKind() throws {
        let cases: [(String, String)] = [
            (#"{"type":"bandwidth","stream":"upstream","attributes":{"rate":64}}"#, "bandwidth:64KB/s,dir=c2s"),
            (#"{"type":"slow_close","attributes":{"delay":500}}"#, "slow-close:500ms,dir=s2c"),
            (#"{"type":"timeout","attributes":{"timeout":2000}}"#, "timeout:2000ms,dir=s2c"),
            (#"{"type":"slicer","attributes":{"average_size":10,"size_variation":4,"delay":100}}"#,
             "slicer,size=10,variation=4,delay=100us,dir=s2c"),
            (#"{"type":"limit_data","attributes":{"bytes":4096}}"#, "limit-data:4096,dir=s2c"),
            (#"{"type":"reset_peer","attributes":{"timeout":100}}"#, "reset,after=100ms"),
            (#"{"type":"latency","toxicity":0.5,"attributes":{"latency":10}}"#, "latency:10ms,jitter=0ms,dir=s2c,prob=0.5"),
        ]
        for (body, rule) in cases {
            let toxic = try ToxiproxyToxic.parse(JSONParser.parse(body)).get()
            #expect(toxic.ruleText == rule)
            #expect((try? toxic.rule().get()) != nil, "\(rule) must parse")
        }
        // A toxic Faultline cannot serve is refused, not accepted and ignored.
        #expect(throws: ToxiproxyFailure.self) {
            try ToxiproxyToxic.parse(JSONParser.parse(#"{"type":"bandwidth","attributes":{"rate":0}}"#)).get()
        }
    }

    @Test func versionAndReset() throws {
        let backend = FakeToxiproxy()
        #expect(call("GET", "/version", "", backend).jsonBody?["version"]?.stringValue == "faultline test")
        _ = call("POST", "/proxies", #"{"name":"a","upstream":"127.0.0.1:1","enabled":false}"#, backend)
        _ = call("POST", "/proxies/a/toxics", #"{"type":"timeout"}"#, backend)
        #expect(call("POST", "/reset", "", backend).status == 204)
        #expect(backend.table["a"]?.enabled == true && backend.table["a"]?.toxics.isEmpty == true)
        #expect(call("GET", "/nope", "", backend).status == 404)
    }

    @Test func proxiesAndToxicsAreBounded() {
        let backend = FakeToxiproxy()
        for n in 0..<ToxiproxyRouter.maxProxies {
            #expect(call("POST", "/proxies", #"{"name":"p\#(n)","upstream":"127.0.0.1:1"}"#, backend).status == 201)
        }
        let over = call("POST", "/proxies", #"{"name":"one-more","upstream":"127.0.0.1:1"}"#, backend)
        #expect(over.status == 400 && over.jsonBody?["error"]?.stringValue?.contains("256 proxies") == true)
        for n in 0..<ToxiproxyRouter.maxToxicsPerProxy {
            #expect(call("POST", "/proxies/p0/toxics", #"{"name":"t\#(n)","type":"timeout"}"#, backend).status == 200)
        }
        #expect(call("POST", "/proxies/p0/toxics", #"{"name":"last","type":"timeout"}"#, backend).status == 400)
    }
}
