import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// Certificates made by `faultline cert` in a fresh directory.
struct CertDirectory {
    let path: String
    var ca: String { path + "/ca.pem" }
    var certificate: String { path + "/server.pem" }
    var key: String { path + "/server-key.pem" }

    /// Runs `faultline cert --out DIR ARGS`; it must succeed.
    init(_ arguments: [String] = [], label: String = "faultline-cert") throws {
        path = TestEnvironment.temporaryDirectory(label).path
        let run = try runFaultline(["cert", "--out", path] + arguments, timeout: 30)
        #expect(run.status == 0, "faultline cert failed: \(run.stderr)")
    }
}

/// A Python `websockets` wss:// echo server (Tests/Peers/tls_server.py) with a certificate
/// from `faultline cert`, and `faultline proxy` in front of it with `proxyArguments`
/// (the upstream URL is added here). The children are killed with SIGKILL at the end.
final class TLSProxyRig {
    static let clientScript = TestEnvironment.path("Tests/Peers/tls_ws_client.py")

    let server: ChildProcess
    let proxy: ChildProcess
    let serverPort: Int
    let proxyPort: Int
    let capturePath: String
    let directory: URL

    init(serverCertificates: CertDirectory, upstreamHost: String = "localhost", proxy proxyArguments: [String]) throws {
        directory = TestEnvironment.temporaryDirectory("faultline-tls-proxy")
        capturePath = directory.appendingPathComponent("capture.jsonl").path
        server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/tls_server.py"),
                                         ["--cert", serverCertificates.certificate, "--key", serverCertificates.key])
        let ready = try #require(server.waitForLine(timeout: 20) { $0.hasPrefix("READY ") },
                                 "tls_server.py did not start: \(server.errorOutput.joined(separator: "\n"))")
        serverPort = try #require(Int(ready.dropFirst(6)))
        proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--record", capturePath,
                                            "--upstream", "wss://\(upstreamHost):\(serverPort)/"] + proxyArguments)
        proxyPort = try listeningPort(of: proxy, "the proxy")
    }

    /// Runs tls_ws_client.py against the proxy (`wss` when `ca` is given) and returns its lines.
    func client(ca: String? = nil, _ arguments: [String]) throws -> [PeerLine] {
        let url = "\(ca == nil ? "ws" : "wss")://localhost:\(proxyPort)/app/key"
        return try peerLines([Self.clientScript, url] + (ca.map { ["--ca", $0] } ?? []) + arguments)
    }

    /// SIGINT to the proxy (it must exit 0), then the capture's records.
    func stopProxy() throws -> CaptureContents {
        try stopRecordingProxy(proxy, capture: capturePath)
    }

    deinit {
        proxy.stop()
        server.stop()
    }
}
