import Capture
import Foundation
import JSON
import Testing
import TestSupport

/// toxiproxy's own Python client (toxiproxy-python) driving `faultline proxy --toxiproxy-api`
/// as it would drive toxiproxy: create a proxy at run time, add and remove a latency toxic,
/// disable and enable the proxy, reset, destroy. The proxy it created relays the Python
/// Bird client and records to its own capture.
@Suite(.serialized) struct ToxiproxyClientTests {
    static let driver = TestEnvironment.path("Tests/Peers/toxiproxy_driver.py")

    @Test func toxiproxyPythonDrivesFaultline() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--toxiproxy-api", "127.0.0.1:0"])
        let line = try #require(rig.proxy.waitForLine(timeout: 20) { $0.hasPrefix("toxiproxy API on http://") },
                                "no toxiproxy line: \(rig.proxy.output)")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let lines = try peerLines([Self.driver, String(port), String(rig.serverPort), ProxyRig.peers], timeout: 120)
        func step(_ name: String) -> PeerLine? { lines.first { $0["step"]?.stringValue == name } }

        #expect(step("running")?["value"]?.boolValue == true, "driver: \(lines)")
        #expect(step("version")?["value"]?["version"]?.stringValue?.hasPrefix("faultline") == true)
        let created = try #require(step("created"))
        #expect(created["name"]?.stringValue == "bird" && created["enabled"]?.boolValue == true)
        #expect(created["upstream"]?.stringValue == "127.0.0.1:\(rig.serverPort)")
        #expect(created["listen"]?.stringValue?.hasPrefix("127.0.0.1:") == true)
        #expect(step("duplicate")?["error"]?.stringValue == "ProxyExists")
        let toxic = step("toxics")?["value"]?["latency_downstream"]
        #expect(toxic?["type"]?.stringValue == "latency" && toxic?["stream"]?.stringValue == "downstream")
        #expect(toxic?["attributes"]?["latency"]?.intValue == 300)
        #expect(step("client")?["received"] == ["bird:connection_established", "bird:pong"])
        #expect(step("toxics-after-delete")?["value"] == [])
        let disabled = try #require(step("disabled"))
        #expect(disabled["enabled"]?.boolValue == false)
        #expect(disabled["closed"]?.arrayValue?.first?["by"]?.stringValue == "abnormal")
        #expect(step("enabled")?["listen"] == created["listen"])
        #expect(step("client-again")?["received"] == ["bird:connection_established"])
        #expect(step("reset")?["value"]?.boolValue == true && step("reset")?["toxics"] == [])
        #expect(step("destroyed")?["proxies"] == [])
        #expect(step("missing")?["error"]?.stringValue == "NotFound")

        _ = try rig.stopProxy()
        // The run-time proxy's own capture: its first run held the latency toxic.
        let path = rig.capturePath.replacingOccurrences(of: "capture.jsonl", with: "capture.bird.jsonl")
        let capture = try CaptureContents(path: path)
        // Connection 1 ran under the latency toxic; connection 2 (after it was removed) was
        // cut when the proxy was disabled: its ends are the RSTs the proxy sent.
        let fromServer = capture.frames.filter { $0.from == .server && $0.conn == 1 }
        #expect(fromServer.count >= 2)   // the handshake, the pong, and the close reply
        #expect(capture.frames.filter { $0.from == .server && $0.conn == 2 }.allSatisfy { $0.action == .forwarded })
        // (Both legs' peers sent nothing more before the capture closed: their ends are capture-end.)
        #expect(capture.ends.filter { $0.conn == 2 && $0.kind != .captureEnd }.map(\.kind) == [.rst, .rst])
        for frame in fromServer {
            guard case .delayed(let held) = frame.action else { Issue.record("not delayed: \(frame.action)"); continue }
            #expect(held >= 300_000)
        }
        #expect(capture.header.settings["upstream"]?.stringValue == "ws://127.0.0.1:\(rig.serverPort)")
    }
}
