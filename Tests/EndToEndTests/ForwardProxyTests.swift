import Capture
import Foundation
import Testing
import TestSupport

/// `faultline proxy --forward` with real clients on loopback: curl (CONNECT and
/// absolute-form), the Python `websockets` client through its HTTP proxy support, TLS
/// interception with a minted certificate, and a passthrough host relayed untouched.
@Suite("Forward proxy", .serialized)
struct ForwardProxyTests {
    @Test("ws:// through CONNECT and absolute-form GET (curl), and the Python client through its proxy support")
    func plainWebSocket() throws {
        let server = try ReadyServer("ws_echo_server.py")
        let rig = try ForwardRig([])
        let target = "http://127.0.0.1:\(server.port)/app/key"
        // CONNECT to the plain port, then the upgrade inside the tunnel.
        let tunnelled = try curlUpgrade(["-p", "-x", rig.proxyURL, target])
        #expect(tunnelled.first?.hasPrefix("< HTTP/1.1 200") == true, "\(tunnelled)")
        // Absolute-form: GET http://127.0.0.1:PORT/app/key with Upgrade, no CONNECT.
        let absolute = try curlUpgrade(["-x", rig.proxyURL, target])
        #expect(absolute.first?.hasPrefix("< HTTP/1.1 101") == true, "\(absolute)")
        // The Python client: websockets >= 15 sends CONNECT to its proxy.
        let lines = try rig.websocketClient("ws://127.0.0.1:\(server.port)/app/key", ["--send", "one", "--send", "two"])
        #expect(lines.received == ["one", "two"], "\(lines)")
        #expect(lines.of(kind: "closed").first?["code"]?.intValue == 1000, "\(lines)")

        let capture = try rig.stop()
        #expect(capture.header.settings["upstream"]?.stringValue == "forward")
        #expect(capture.opens.map(\.upstream) == Array(repeating: "ws://127.0.0.1:\(server.port)", count: 3))
        let requests = capture.upgrades.filter { $0.from == .client }
        #expect(requests.map(\.target) == ["/app/key", "/app/key", "/app/key"], "origin form upstream")
        #expect(requests.allSatisfy { $0.header("Host") == "127.0.0.1:\(server.port)" })
        #expect(capture.upgrades.filter { $0.from == .server }.map(\.status) == [101, 101, 101])
        let texts = capture.frames.filter { $0.conn == 3 && $0.opcode == .text }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(texts == ["one", "one", "two", "two"])
    }

    @Test("wss:// through CONNECT: intercepted with a minted certificate the client checks against the CA")
    func interceptedTLS() throws {
        let upstream = try CertDirectory(label: "faultline-forward-upstream")
        let interception = try CertDirectory(label: "faultline-forward-ca")
        let server = try ReadyServer("tls_server.py", ["--cert", upstream.certificate, "--key", upstream.key])
        let rig = try ForwardRig(["--tls-ca", interception.ca, "--tls-ca-key", interception.path + "/ca-key.pem",
                                  "--upstream-ca", upstream.ca])
        let url = "wss://localhost:\(server.port)/app/key"
        let lines = try rig.websocketClient(url, ca: interception.ca, ["--send", "through TLS"])
        #expect(lines.received == ["through TLS"], "\(lines)")
        // curl with the CA trusted: CONNECT, TLS to the proxy's minted certificate, upgrade.
        let curl = try curlUpgrade(["-x", rig.proxyURL, "--cacert", interception.ca, "https://localhost:\(server.port)/app/key"])
        #expect(curl.first?.hasPrefix("< HTTP/1.1 200") == true && curl.last?.hasPrefix("< HTTP/1.1 101") == true, "\(curl)")
        // CONNECT names 127.0.0.1 but SNI says localhost: the certificate follows the SNI name.
        // (A plain GET this time: the WebSocket server answers 426, relayed as an http exchange.)
        let sni = try runCommand("/usr/bin/curl", ["-sS", "-v", "--http1.1", "-o", "/dev/null", "-x", rig.proxyURL,
                                                   "--cacert", interception.ca,
                                                   "--connect-to", "localhost:\(server.port):127.0.0.1:\(server.port)",
                                                   "https://localhost:\(server.port)/"], timeout: 30)
        #expect(sni.stderr.contains("> CONNECT 127.0.0.1:\(server.port)"), "\(sni.stderr)")
        #expect(sni.stderr.contains(#"subjectAltName: host "localhost" matched cert's "localhost""#), "\(sni.stderr)")
        #expect(sni.stderr.contains("< HTTP/1.1 426"), "\(sni.stderr)")
        // A client that trusts only the server's own CA (pinning) refuses the minted certificate.
        let pinned = try rig.websocketClient(url, ca: upstream.ca, ["--send", "x"])
        #expect(pinned.of(kind: "error").first?["detail"]?.stringValue?.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(pinned)")

        let capture = try rig.stop()
        #expect(capture.opens.map(\.upstream) == ["wss://localhost:\(server.port)", "wss://localhost:\(server.port)"])
        let texts = capture.frames.filter { $0.opcode == .text }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(texts == ["through TLS", "through TLS"], "plaintext frames recorded")
        #expect(capture.notes.contains { $0.message.contains("TLS interception of localhost:\(server.port) failed") },
                "the pinned client's refusal is noted")
        #expect(capture.exchanges.map(\.url) == ["https://127.0.0.1:\(server.port)/"])
        #expect(capture.exchanges.first?.status == 426)
    }

    @Test("a --passthrough host is tunnelled untouched: a pinned client connects, the tunnel is recorded")
    func passthrough() throws {
        let upstream = try CertDirectory(label: "faultline-forward-upstream")
        let interception = try CertDirectory(label: "faultline-forward-ca")
        let server = try ReadyServer("tls_server.py", ["--cert", upstream.certificate, "--key", upstream.key])
        let rig = try ForwardRig(["--tls-ca", interception.ca, "--tls-ca-key", interception.path + "/ca-key.pem",
                                  "--passthrough", "localhost"])
        let lines = try rig.websocketClient("wss://localhost:\(server.port)/app/key", ca: upstream.ca,
                                            ["--send", "pinned", "--no-compression"])
        #expect(lines.received == ["pinned"], "\(lines)")

        let capture = try rig.stop()
        #expect(capture.frames.isEmpty && capture.opens.isEmpty, "an opaque tunnel has no frames")
        let tunnels = capture.tunnels
        #expect(tunnels.map(\.event) == [.open, .end], "\(tunnels)")
        #expect(tunnels.first?.target == "localhost:\(server.port)")
        #expect(tunnels.first?.detail == "--passthrough")
        // TLS handshakes and the records of an echoed message: bytes both ways.
        #expect((tunnels.last?.bytesUp ?? 0) > 200 && (tunnels.last?.bytesDown ?? 0) > 200, "\(tunnels)")
    }

    @Test("a CONNECT or absolute-form request to the forward proxy's own address is answered 508, not relayed into itself")
    func selfTargetIsALoop() throws {
        let rig = try ForwardRig([])
        // Absolute form: curl asks the proxy for http://its-own-address/.
        let get = try ChildProcess("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                                                     "-x", rig.proxyURL, "http://127.0.0.1:\(rig.port)/"])
        _ = get.waitForExit(timeout: 30)
        #expect(get.output.joined() == "508", "\(get.errorOutput)")
        // CONNECT (-p tunnels through the proxy, as a passthrough client would), by name.
        let connect = try ChildProcess("/usr/bin/curl", ["-sS", "-p", "-o", "/dev/null", "--max-time", "20",
                                                         "-x", rig.proxyURL, "http://localhost:\(rig.port)/"])
        _ = connect.waitForExit(timeout: 30)
        #expect(connect.errorOutput.joined().contains("508"), "\(connect.errorOutput)")

        let capture = try rig.stop()
        let loops = capture.notes.filter { $0.message.contains("loop detected") }
        #expect(loops.count == 2, "\(capture.notes)")
        #expect(capture.tunnels.isEmpty && capture.exchanges.isEmpty, "nothing was relayed")
    }
}
