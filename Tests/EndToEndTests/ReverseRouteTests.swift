import Capture
import Foundation
import Testing
import TestSupport

/// `faultline proxy --route HOST[/PATH]=UPSTREAM`: one reverse proxy, several upstreams,
/// chosen by the request's Host and path (curl sends the Host).
@Suite("Reverse proxy routes", .serialized)
struct ReverseRouteTests {
    @Test("requests go to the upstream of their Host and path; no route and no --upstream is a 404")
    func routes() throws {
        let one = try ReadyServer("ws_echo_server.py")
        let two = try ReadyServer("ws_echo_server.py")
        let directory = TestEnvironment.temporaryDirectory("faultline-routes")
        let capturePath = directory.appendingPathComponent("capture.jsonl").path
        let proxy = try ChildProcess.faultline([
            "proxy", "--listen", "127.0.0.1:0", "--record", capturePath,
            "--route", "one.test=ws://127.0.0.1:\(one.port)",
            "--route", "two.test/chat=ws://127.0.0.1:\(two.port)/base",
            "--fault", "close:4009,host=two.test,path=/chat/",
        ])
        defer { proxy.stop() }
        let port = try listeningPort(of: proxy, "the proxy")
        let url = "http://127.0.0.1:\(port)"
        #expect(try curlUpgrade(["-H", "Host: one.test", url + "/app/key"]).last?.hasPrefix("< HTTP/1.1 101") == true)
        #expect(try curlUpgrade(["-H", "Host: two.test:80", url + "/chat/room"]).last?.hasPrefix("< HTTP/1.1 101") == true)
        let unrouted = try runCommand("/usr/bin/curl", ["-sS", "-v", "--http1.1", "-H", "Host: two.test", url + "/other"], timeout: 30)
        #expect(unrouted.stderr.contains("< HTTP/1.1 404"), "\(unrouted.stderr)")
        #expect(unrouted.stdout.contains("no --route for Host two.test and path /other"))

        let capture = try stopRecordingProxy(proxy, capture: capturePath)
        #expect(capture.opens.map(\.upstream) == ["ws://127.0.0.1:\(one.port)", "ws://127.0.0.1:\(two.port)"])
        let requests = capture.upgrades.filter { $0.from == .client }
        #expect(requests.map { $0.header("Host") } == ["one.test", "two.test:80"], "the client's request as sent")
        // host= and path= scope the fault to the second connection only.
        #expect(capture.faults.map(\.conn) == [2], "\(capture.faults)")
        #expect(capture.header.settings["routes"] == .array([.string("one.test=ws://127.0.0.1:\(one.port)"),
                                                             .string("two.test/chat=ws://127.0.0.1:\(two.port)/base")]))
    }
}
