import ControlAPI
import Faults
import JSON
import Testing
import WebSocket

/// `POST /connections/{id}/apply` never says yes to a no-op, and `GET /rules` tells how
/// often each rule fired.
@Suite struct ApplyTruthTests {
    let router = ControlRouter(token: nil)

    func apply(_ rule: String, to id: Int = 1, _ backend: FakeBackend) -> ControlResponse {
        router.respond(to: ControlRequest(method: "POST", target: "/connections/\(id)/apply",
                                          headers: [HeaderField("Host", "127.0.0.1:8474")], body: Array(rule.utf8)),
                       backend: backend)
    }

    @Test func kindsThatActAtTheHandshakeAreRefusedWithTheReason() {
        let backend = FakeBackend()
        for (rule, reason) in [("activity-timeout:5", "rewrites the server's handshake event"),
                               ("strip-socket-id", "rewrites the server's handshake event"),
                               ("refuse-http:503", "answers the upgrade request"),
                               ("refuse:4001", "answers the upgrade request")] {
            let response = apply(rule, backend)
            #expect(response.status == 400, "\(rule)")
            #expect(response.jsonBody?["error"]?.stringValue?.contains(reason) == true, "\(rule): \(response.jsonBody ?? .null)")
        }
        #expect(backend.changed.isEmpty)
    }

    @Test func scopeKeysAreRefusedAndStartConditionsKept() {
        let backend = FakeBackend()
        for rule in ["drop,conn=2", "drop,every=2", "drop,client=x", "drop,prob=0.5"] {
            let response = apply(rule, backend)
            #expect(response.status == 400, "\(rule)")
            #expect(response.jsonBody?["error"]?.stringValue?.contains("acts on the connection named in the path") == true)
        }
        let delayed = apply("close:4009,after=3s,for=10s", backend)
        #expect(delayed.status == 200)
        #expect(delayed.jsonBody?["rule"]?.stringValue == "close:4009,after=3s,for=10s")
        #expect(backend.changed == [1])
    }

    @Test func rulesShowHowOftenTheyFired() throws {
        let backend = FakeBackend()
        backend.faultEngine.add(try FaultRule.parse("latency:10ms"))
        var one = ConnectionFaults(engine: backend.faultEngine, conn: 1, openedAt: 0)
        _ = one.upgradeRequested(clientKey: "k", now: 0)
        _ = one.websocketOpened(now: 0)
        let list = router.respond(to: ControlRequest(method: "GET", target: "/rules",
                                                     headers: [HeaderField("Host", "localhost")]), backend: backend)
        #expect(list.jsonBody?["rules"]?.arrayValue?.first?["fired"]?.intValue == 1)
    }

    @Test func eventsNeedAStreamingServer() {
        let response = router.respond(to: ControlRequest(method: "GET", target: "/events",
                                                         headers: [HeaderField("Host", "localhost")]), backend: FakeBackend())
        #expect(response.status == 501)
        let post = router.respond(to: ControlRequest(method: "POST", target: "/events",
                                                     headers: [HeaderField("Host", "localhost")]), backend: FakeBackend())
        #expect(post.status == 405)
    }
}
