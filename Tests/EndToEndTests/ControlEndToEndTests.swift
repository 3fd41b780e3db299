import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// The control API of a running `faultline proxy --control 127.0.0.1:0`, driven with
/// `faultline ctl` and raw HTTP, with a Python `websockets` client connected through it.
@Suite(.serialized) struct ControlEndToEndTests {
    static let token = "e2e-token"

    /// A proxy with the control API, and the API's address.
    func rig(_ extra: [String] = []) throws -> (ProxyRig, String) {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--control", "127.0.0.1:0", "--control-token", Self.token] + extra)
        let line = try #require(rig.proxy.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") },
                                "no control line: \(rig.proxy.output)")
        return (rig, String(line.dropFirst("control API on http://".count)))
    }

    func ctl(_ address: String, _ arguments: [String], token: String? = token) throws -> (status: Int32?, stdout: String, stderr: String) {
        try runFaultline(["ctl", "--control", address] + (token.map { ["--token", $0] } ?? []) + arguments, timeout: 30)
    }

    @Test func addListRemoveResetWithCtl() throws {
        let (rig, address) = try rig()
        defer { withExtendedLifetime(rig) {} }
        let added = try ctl(address, ["add", "close:4009,after=30s,reason=terminated"])
        #expect(added.status == 0)
        #expect(added.stdout == "added rule 1: close:4009,after=30s,reason=terminated")
        #expect(try ctl(address, ["add", "stall-pongs,conn=2"]).status == 0)

        let listed = try ctl(address, ["--json", "rules"])
        #expect(listed.status == 0)
        let rules = try JSONParser.parse(listed.stdout)["rules"]?.arrayValue ?? []
        #expect(rules.compactMap { $0["rule"]?.stringValue } == ["close:4009,after=30s,reason=terminated", "stall-pongs,conn=2"])
        #expect(rules.compactMap { $0["id"]?.intValue } == [1, 2])

        let table = try ctl(address, ["rules"])
        #expect(table.stdout.split(separator: "\n").first?.split(separator: " ", omittingEmptySubsequences: true) == ["ID", "KIND", "FIRED", "RULE"])
        #expect(table.stdout.contains("2   stall-pongs  0      stall-pongs,conn=2"))

        let removed = try ctl(address, ["remove", "1"])
        #expect(removed.stdout == "removed rule 1: close:4009,after=30s,reason=terminated")
        let again = try ctl(address, ["remove", "1"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("404 Not Found: no rule 1 (rules: 2)"))

        let reset = try ctl(address, ["reset"])
        #expect(reset.stdout == "removed 1 rule")
        #expect(try ctl(address, ["rules"]).stdout == "no rules")
    }

    @Test func applyNowClosesALiveConnectionWith4009() throws {
        let (rig, address) = try rig()
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/app/key", "--mode", "bird", "--wait", "20"])
        defer { client.stop() }
        try #require(client.waitForLine(timeout: 20) { $0.contains("\"received\"") } != nil, "the client got no handshake")

        let listed = try ctl(address, ["--json", "connections"])
        let connections = try JSONParser.parse(listed.stdout)["connections"]?.arrayValue ?? []
        try #require(connections.count == 1, "connections: \(listed.stdout)")
        let id = try #require(connections[0]["id"]?.intValue)
        #expect(connections[0]["state"]?.stringValue == "open")
        // Issue 17 item 5: which connection is which, by the client's own request.
        let agent = try #require(connections[0]["user_agent"]?.stringValue, "\(listed.stdout)")
        #expect(agent.contains("websockets"), "the Python client's User-Agent: \(agent)")
        #expect(connections[0]["path"]?.stringValue == "/app/key")
        #expect(connections[0]["client_key"]?.stringValue == "127.0.0.1 | \(agent) | /app/key")
        let table = try ctl(address, ["connections"])
        let header = String(table.stdout.split(separator: "\n").first ?? "")
        #expect(header.contains("PATH") && header.contains("USER-AGENT") && header.hasSuffix("CLIENT KEY"), "\(table.stdout)")
        #expect(table.stdout.contains("/app/key  \(agent)  127.0.0.1 | \(agent) | /app/key"), "\(table.stdout)")

        let applied = try ctl(address, ["apply", String(id), "close:4009,reason=terminated"])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout == "applied close:4009,reason=terminated to connection \(id)")

        let closed = try #require(client.waitForLine(timeout: 20) { $0.contains("\"closed\"") }, "the client was not closed")
        let line = PeerLine(closed)
        #expect(line["code"]?.intValue == 4009)
        #expect(line["reason"]?.stringValue == "terminated")
        #expect(line["by"]?.stringValue == "peer")

        let metrics = try ctl(address, ["metrics"])
        let samples = Set(metrics.stdout.split(separator: "\n").map(String.init))
        #expect(samples.contains("faultline_faults_fired_total{kind=\"close\"} 1"), "\(metrics.stdout)")
        #expect(samples.contains("faultline_connections_total 1"))
        #expect(samples.contains("faultline_frames_injected_total 1"))
        #expect(samples.contains { $0.hasPrefix("faultline_bytes_total{direction=\"s2c\"} ") && !$0.hasSuffix(" 0") })
        let json = try ctl(address, ["--json", "metrics"])
        #expect(try JSONParser.parse(json.stdout)["faultline_faults_fired_total{kind=\"close\"}"]?.intValue == 1)

        let capture = try rig.stopProxy()
        #expect(capture.faults.count == 1, "the capture records the applied fault")
    }

    @Test func aRuleAddedLaterActsOnAnOpenConnection() throws {
        let (rig, address) = try rig()
        defer { withExtendedLifetime(rig) {} }
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/app/key", "--mode", "bird", "--wait", "20"])
        defer { client.stop() }
        try #require(client.waitForLine(timeout: 20) { $0.contains("\"received\"") } != nil, "the client got no handshake")
        #expect(try ctl(address, ["add", "close:4200,reason=added-live"]).status == 0)
        let closed = try #require(client.waitForLine(timeout: 20) { $0.contains("\"closed\"") }, "the rule did not act")
        #expect(PeerLine(closed)["code"]?.intValue == 4200)
        #expect(PeerLine(closed)["reason"]?.stringValue == "added-live")
    }

    @Test func wrongTokenAndBadRulesAreRefused() throws {
        let (rig, address) = try rig()
        defer { withExtendedLifetime(rig) {} }
        #expect(try RawHTTP.request(address, "GET", "/rules").status == 401)
        #expect(try RawHTTP.request(address, "GET", "/rules", token: "wrong").status == 401)
        #expect(try RawHTTP.request(address, "POST", "/reset", token: "wrong").status == 401)
        #expect(try RawHTTP.request(address, "GET", "/health", token: Self.token).status == 200)
        let viaCtl = try ctl(address, ["rules"], token: "wrong")
        #expect(viaCtl.status == 1)
        #expect(viaCtl.stderr.contains("401 Unauthorized"))

        let bad = try RawHTTP.request(address, "POST", "/rules", token: Self.token, body: #"{"rule":"close:99999,after=5s"}"#)
        #expect(bad.status == 400)
        let body = try JSONParser.parse(bad.body)
        #expect(body["error"]?.stringValue == "fault rule 'close:99999,after=5s' (column 7): close code 99999 outside 1000-4999")
        #expect(body["column"]?.intValue == 7)

        let refused = try ctl(address, ["add", "latency:fast"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("400 Bad Request: fault rule 'latency:fast'"))
        #expect(refused.stderr.contains("  latency:fast\n          ^^^^"), "\(refused.stderr)")
        #expect(try ctl(address, ["--json", "rules"]).stdout == #"{"rules":[]}"#, "nothing was installed")

        #expect(try RawHTTP.request(address, "GET", "/nope", token: Self.token).status == 404)
        #expect(try RawHTTP.request(address, "PUT", "/rules", token: Self.token).status == 405)
    }

    @Test func unusableControlFlagsAndUnreachableProxy() throws {
        let remote = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--control", "0.0.0.0:0"])
        #expect(remote.status == 2)
        #expect(remote.stderr.contains("--control-allow-remote"))
        let tokenOnly = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--control-token", "x"])
        #expect(tokenOnly.status == 2)
        #expect(tokenOnly.stderr.contains("--control-token needs --control"))
        let badAddress = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--control", "nowhere"])
        #expect(badAddress.status == 2)

        let port = TestEnvironment.freePort()
        let unreachable = try runFaultline(["ctl", "--control", "127.0.0.1:\(port)", "rules"])
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.contains("127.0.0.1:\(port)"))
        let usage = try runFaultline(["ctl", "apply", "1"])
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("expected apply CONN RULE"))
    }
}

/// One HTTP/1.1 request over a plain socket, for requests `faultline ctl` would not send.
enum RawHTTP {
    static func request(_ address: String, _ method: String, _ path: String, token: String? = nil,
                        body: String? = nil) throws -> (status: Int, body: String) {
        let port = try #require(address.split(separator: ":").last.flatMap { UInt16($0) })
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        peer.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0, "cannot connect to \(address)")
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        text += "Content-Length: \(body?.utf8.count ?? 0)\r\n\r\n" + (body ?? "")
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += chunk[..<n]
        }
        let response = String(decoding: received, as: UTF8.self)
        let status = try #require(response.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "no status in \(response)")
        let bodyText = response.range(of: "\r\n\r\n").map { String(response[$0.upperBound...]) } ?? ""
        return (status, bodyText)
    }
}
