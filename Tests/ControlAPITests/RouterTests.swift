import ControlAPI
import Faults
import JSON
import Testing
import WebSocket

/// The router alone: every endpoint, every refusal, against a fake proxy.
@Suite struct RouterTests {
    let router = ControlRouter(token: nil)

    @Test func addListGetRemoveRules() throws {
        let backend = FakeBackend()
        let added = router.respond(to: request("POST", "/rules", body: #"{"rule":"close:4009,after=5s"}"#), backend: backend)
        #expect(added.status == 201)
        #expect(added.jsonBody?["id"]?.intValue == 1)
        #expect(added.jsonBody?["rule"]?.stringValue == "close:4009,after=5s")
        #expect(added.jsonBody?["kind"]?.stringValue == "close")
        #expect(added.headers.first(named: "Location") == "/rules/1")
        #expect(backend.changed == [nil], "open connections are told about a new rule at once")

        let plain = router.respond(to: request("POST", "/rules", body: "stall-pongs,conn=2\n"), backend: backend)
        #expect(plain.status == 201)
        #expect(plain.jsonBody?["rule"]?.stringValue == "stall-pongs,conn=2")

        let list = router.respond(to: request("GET", "/rules"), backend: backend)
        #expect(list.status == 200)
        let rules = try #require(list.jsonBody?["rules"]?.arrayValue)
        #expect(rules.compactMap { $0["rule"]?.stringValue } == ["close:4009,after=5s", "stall-pongs,conn=2"])
        #expect(backend.faultEngine.list().map(\.rule.text) == ["close:4009,after=5s", "stall-pongs,conn=2"])

        let one = router.respond(to: request("GET", "/rules/2"), backend: backend)
        #expect(one.jsonBody?["rule"]?.stringValue == "stall-pongs,conn=2")

        let removed = router.respond(to: request("DELETE", "/rules/1"), backend: backend)
        #expect(removed.status == 200)
        #expect(removed.jsonBody?["removed"]?["rule"]?.stringValue == "close:4009,after=5s")
        #expect(backend.faultEngine.list().map(\.id) == [2])

        let again = router.respond(to: request("DELETE", "/rules/1"), backend: backend)
        #expect(again.status == 404)
        #expect(again.jsonBody?["error"]?.stringValue == "no rule 1 (rules: 2)")
    }

    @Test func badRuleIsRefusedWithThePlace() throws {
        let backend = FakeBackend()
        let response = router.respond(to: request("POST", "/rules", body: #"{"rule":"close:99999,after=5s"}"#), backend: backend)
        #expect(response.status == 400)
        let body = try #require(response.jsonBody)
        let error = try #require(body["error"]?.stringValue)
        #expect(error.contains("99999"))
        #expect(error.contains("column 7"))
        #expect(body["column"]?.intValue == 7)
        #expect(body["length"]?.intValue == 5)
        #expect(body["detail"]?.stringValue?.hasSuffix("close:99999,after=5s\n        ^^^^^") == true)
        #expect(backend.faultEngine.list().isEmpty)
        #expect(backend.changed.isEmpty)

        let unknown = router.respond(to: request("POST", "/rules", body: "explode,after=1s"), backend: backend)
        #expect(unknown.status == 400)
        #expect(unknown.jsonBody?["error"]?.stringValue?.contains("unknown fault kind 'explode'") == true)

        for (body, wanted) in [("", "missing rule"), ("{\"rule\": 5}", "string member 'rule'"), ("{oops", "not valid JSON")] {
            let refused = router.respond(to: request("POST", "/rules", body: body), backend: backend)
            #expect(refused.status == 400)
            #expect(refused.jsonBody?["error"]?.stringValue?.contains(wanted) == true, "body \(body)")
        }
    }

    @Test func applyNowQueuesForThatConnectionAndTellsIt() throws {
        let backend = FakeBackend()
        let applied = router.respond(to: request("POST", "/connections/2/apply", body: "close:4009,reason=terminated"), backend: backend)
        #expect(applied.status == 200)
        #expect(applied.jsonBody?["connection"]?.intValue == 2)
        #expect(applied.jsonBody?["rule"]?.stringValue == "close:4009,reason=terminated")
        #expect(backend.changed == [2])
        #expect(backend.faultEngine.list().isEmpty, "apply-now installs no rule for other connections")

        let missing = router.respond(to: request("POST", "/connections/9/apply", body: "drop"), backend: backend)
        #expect(missing.status == 404)
        #expect(missing.jsonBody?["error"]?.stringValue == "no open connection 9 (open: 1, 2)")

        let bad = router.respond(to: request("POST", "/connections/1/apply", body: "close:1006"), backend: backend)
        #expect(bad.status == 400)
        #expect(backend.changed == [2])
    }

    @Test func connectionsResetHealth() throws {
        let backend = FakeBackend()
        let connections = router.respond(to: request("GET", "/connections"), backend: backend)
        #expect(connections.jsonBody?["connections"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [1, 2])
        backend.faultEngine.add(try FaultRule.parse("drop,after=1s"))
        backend.faultEngine.add(try FaultRule.parse("reset,after=2s"))
        let reset = router.respond(to: request("POST", "/reset"), backend: backend)
        #expect(reset.jsonBody?["removed"]?.intValue == 2)
        #expect(backend.faultEngine.list().isEmpty)
        #expect(backend.changed == [nil])
        #expect(router.respond(to: request("GET", "/health"), backend: backend).jsonBody?["status"]?.stringValue == "ok")
    }

    @Test func metricsInPrometheusText() throws {
        let backend = FakeBackend()
        backend.counters.connectionsOpen = 2
        backend.counters.connectionsTotal = 7
        backend.counters.framesClientToServer = 11
        backend.counters.bytesServerToClient = 4096
        backend.counters.framesDropped = 3
        backend.faultEngine.add(try FaultRule.parse("stall-pongs"))
        let response = router.respond(to: request("GET", "/metrics"), backend: backend)
        #expect(response.status == 200)
        #expect(response.headers.first(named: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = Set(response.text.split(separator: "\n").map(String.init))
        for wanted in ["faultline_connections_open 2", "faultline_connections_total 7",
                       "faultline_frames_total{direction=\"c2s\"} 11", "faultline_frames_total{direction=\"s2c\"} 0",
                       "faultline_bytes_total{direction=\"s2c\"} 4096", "faultline_frames_dropped_total 3",
                       "faultline_frames_delayed_total 0", "faultline_frames_injected_total 0",
                       "faultline_faults_fired_total{kind=\"close\"} 0", "faultline_rules 1",
                       "# TYPE faultline_frames_total counter", "# TYPE faultline_connections_open gauge"] {
            #expect(lines.contains(wanted), "missing line: \(wanted)")
        }
        // Every sample line is NAME[{LABELS}] INTEGER.
        for line in lines where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            #expect(parts.count == 2 && parts[0].hasPrefix("faultline_") && Int(parts[1]) != nil, "bad sample: \(line)")
        }
    }

    @Test func unknownPathsAndWrongMethods() {
        let backend = FakeBackend()
        for path in ["/", "/nope", "/rules/abc", "/rules/1/2", "/connections/x/apply", "rules"] {
            #expect(router.respond(to: request("GET", path), backend: backend).status == 404, "\(path)")
        }
        let wrong = router.respond(to: request("DELETE", "/rules"), backend: backend)
        #expect(wrong.status == 405)
        #expect(wrong.headers.first(named: "Allow") == "GET, POST")
        #expect(router.respond(to: request("GET", "/reset"), backend: backend).status == 405)
        #expect(router.respond(to: request("POST", "/metrics"), backend: backend).status == 405)
        #expect(router.respond(to: request("GET", "/rules/?x=1"), backend: backend).status == 200, "trailing slash and query ignored")
    }

    @Test func tokenIsRequiredWhenConfigured() {
        let backend = FakeBackend()
        let guarded = ControlRouter(token: "s3cret")
        let none = guarded.respond(to: request("GET", "/rules"), backend: backend)
        #expect(none.status == 401)
        #expect(none.headers.first(named: "WWW-Authenticate")?.hasPrefix("Bearer") == true)
        for value in ["Bearer wrong", "Bearer s3cre", "Bearer s3cret2", "s3cret", "Basic s3cret"] {
            let refused = guarded.respond(to: request("POST", "/reset", headers: [("Authorization", value)]), backend: backend)
            #expect(refused.status == 401, "\(value)")
        }
        #expect(backend.changed.isEmpty, "a refused request changes nothing")
        let ok = guarded.respond(to: request("GET", "/rules", headers: [("Authorization", "Bearer s3cret")]), backend: backend)
        #expect(ok.status == 200)
    }

    @Test func browsersAndForeignHostsAreRefused() {
        let backend = FakeBackend()
        let fromPage = router.respond(to: request("POST", "/reset", headers: [("Origin", "https://evil.example")]), backend: backend)
        #expect(fromPage.status == 403)
        let rebinding = router.respond(to: ControlRequest(method: "GET", target: "/rules", headers: [.init("Host", "evil.example:8474")]),
                                       backend: backend)
        #expect(rebinding.status == 403)
        for host in ["localhost:8474", "127.0.0.1", "[::1]:8474", "127.1.2.3:1"] {
            let ok = router.respond(to: ControlRequest(method: "GET", target: "/health", headers: [.init("Host", host)]), backend: backend)
            #expect(ok.status == 200, "\(host)")
        }
        let remote = ControlRouter(token: "t", loopbackOnly: false)
        let far = remote.respond(to: ControlRequest(method: "GET", target: "/health",
                                                    headers: [.init("Host", "proxy.lan:8474"), .init("Authorization", "Bearer t")]),
                                 backend: backend)
        #expect(far.status == 200)
    }
}
