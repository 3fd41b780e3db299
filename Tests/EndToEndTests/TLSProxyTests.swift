import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// `faultline cert` and `faultline proxy` with TLS on either leg, against a Python
/// `websockets` wss:// server whose certificate `faultline cert` made.
@Suite(.serialized) struct TLSProxyTests {
    static let event = #"{"event":"bird:greeting","data":{"text":"hello over TLS"}}"#
    /// Echoed by the server, this is the server's Bird handshake as far as the analyzer knows.
    static let handshake = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"123.456\",\"activity_timeout\":120}"}"#
    /// Repetitive enough that deflate makes it clearly smaller on the wire.
    static let bigEvent = #"{"event":"bird:members","data":{"members":["#
        + (1...20).map { #"{"id":"member-\#($0)","status":"online"}"# }.joined(separator: ",") + "]}}"

    @Test func certMakesACAAndAServerCertificateAndSaysHowToTrustIt() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-cert").path
        let first = try runFaultline(["cert", "--out", directory, "--host", "localhost", "--host", "10.0.0.7"], timeout: 30)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("certificate for localhost, 10.0.0.7"))
        #expect(first.stdout.contains("(new)"))
        for hint in ["curl --cacert", "SSL_CERT_FILE=", "update-ca-certificates", "Firefox", "--tls-cert"] {
            #expect(first.stdout.contains(hint), "'\(hint)' not in: \(first.stdout)")
        }
        for (file, mode) in [("ca.pem", 0o644), ("ca-key.pem", 0o600), ("server.pem", 0o644), ("server-key.pem", 0o600)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + file)
            #expect(attributes[.posixPermissions] as? Int == mode, "\(file)")
        }
        let ca = try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)
        // A second run keeps the CA (already trusted) and only makes a new server certificate.
        let second = try runFaultline(["cert", "--out", directory], timeout: 30)
        #expect(second.status == 0)
        #expect(second.stdout.contains("reused"))
        #expect(try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8) == ca)
        let bad = try runFaultline(["cert", "--out", directory, "--host", "two words"], timeout: 30)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--host"))
        let badDays = try runFaultline(["cert", "--out", directory, "--days", "soon"], timeout: 30)
        #expect(badDays.status == 2)
    }

    @Test func aPlainClientReachesAWSSServerThroughTheProxy() throws {
        let certificates = try CertDirectory()
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: ["--upstream-ca", certificates.ca])
        let lines = try rig.client(["--send", Self.event, "--send", "second"])
        #expect(lines.received == [Self.event, "second"], "\(lines)")
        #expect(lines.of(kind: "closed").first?["code"]?.intValue == 1000)
        let capture = try rig.stopProxy()
        #expect(capture.header.settings["upstream"]?.stringValue == "wss://localhost:\(rig.serverPort)")
        let texts = capture.frames.filter { $0.opcode == .text }.map { $0.text }
        #expect(texts == [Self.event, Self.event, "second", "second"])
    }

    @Test func aTLSClientReachesAWSSServerThroughTheProxyWithAKeyLog() throws {
        let certificates = try CertDirectory()
        let proxyCertificates = try CertDirectory(label: "faultline-proxy-cert")
        let keyLog = TestEnvironment.temporaryDirectory("faultline-keylog").appendingPathComponent("keys.log").path
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: [
            "--upstream-ca", certificates.ca, "--tls-cert", proxyCertificates.certificate, "--tls-key", proxyCertificates.key,
            "--keylog", keyLog])
        let lines = try rig.client(ca: proxyCertificates.ca, ["--send", Self.event])
        #expect(lines.received == [Self.event], "\(lines)")
        // The client trusts only the proxy's CA: the server's CA would not do.
        let wrong = try rig.client(ca: certificates.ca, ["--send", "x"])
        #expect(wrong.of(kind: "error").first?["detail"]?.stringValue?.contains("certificate verify failed") == true, "\(wrong)")
        let capture = try rig.stopProxy()
        #expect(capture.frames.filter { $0.opcode == .text }.map(\.text) == [Self.event, Self.event])
        // Both legs of the good connection (client->proxy, proxy->server) logged their secrets.
        let labels = try String(contentsOfFile: keyLog, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ")[0] }
        #expect(labels.filter { $0 == "CLIENT_TRAFFIC_SECRET_0" }.count >= 2, "\(labels)")
        #expect(capture.records.contains {
            if case .note(let note) = $0 { note.message.contains("TLS from a client") } else { false }
        }, "the refused client handshake is noted in the capture")
    }

    @Test func aLargeMessageCrossesBothTLSLegsIntact() throws {
        let certificates = try CertDirectory()
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: [
            "--upstream-ca", certificates.ca, "--tls-cert", certificates.certificate, "--tls-key", certificates.key])
        let size = 2 * 1024 * 1024
        let lines = try rig.client(ca: certificates.ca, ["--send-binary", String(size), "--no-compression", "--wait", "30"])
        let echoed = try #require(lines.of(kind: "echoed").first, "\(lines)")
        #expect(echoed["len"]?.intValue == Int64(size))
        #expect(echoed["intact"]?.boolValue == true)
        #expect(lines.of(kind: "closed").first?["code"]?.intValue == 1000)
        let capture = try rig.stopProxy()
        #expect(capture.frames.filter { $0.opcode == .binary || $0.opcode == .continuation }.reduce(0) { $0 + $1.length } == 2 * size)
        #expect(capture.ends.allSatisfy { $0.kind == .fin }, "clean ends on both legs: \(capture.ends)")
    }

    @Test(arguments: [
        ("wrong CA", [String](), true, "certificate verify failed: unable to get local issuer certificate"),
        ("wrong host name", ["--host", "elsewhere.example"], false, "certificate verify failed: hostname mismatch"),
        ("expired", ["--days=-1"], false, "certificate verify failed: certificate has expired"),
    ])
    func aRefusedUpstreamCertificateIsA502WithTheReason(_ label: String, _ certArguments: [String], _ otherCA: Bool,
                                                        _ reason: String) throws {
        let certificates = try CertDirectory(certArguments)
        let trusted = otherCA ? try CertDirectory(label: "faultline-other-ca").ca : certificates.ca
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: ["--upstream-ca", trusted])
        let lines = try rig.client(["--send", "x"])
        let refused = try #require(lines.of(kind: "refused").first, "\(label): \(lines)")
        #expect(refused["status"]?.intValue == 502)
        #expect(refused["body"]?.stringValue?.contains("TLS handshake with localhost:\(rig.serverPort) failed: \(reason)") == true,
                "\(label): \(refused)")
        #expect(rig.proxy.waitForLine(timeout: 10, stderr: true) { $0.contains(reason) } != nil,
                "\(label): the operator is told on stderr: \(rig.proxy.errorOutput)")
        let capture = try rig.stopProxy()
        #expect(capture.ends.contains { $0.side == .server && ($0.detail ?? "").contains(reason) })
    }

    @Test func insecureUpstreamWarnsAndAcceptsAnyCertificate() throws {
        let certificates = try CertDirectory(["--days=-1", "--host", "elsewhere.example"])
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: ["--insecure-upstream"])
        #expect(rig.proxy.waitForLine(timeout: 10, stderr: true) { $0.contains("warning: --insecure-upstream") } != nil)
        let lines = try rig.client(["--send", "anyway"])
        #expect(lines.received == ["anyway"])
        _ = try rig.stopProxy()
    }

    @Test func anInjected4009ReachesAClientOnACompressedTLSConnectionAndTheCaptureIsInflated() throws {
        let certificates = try CertDirectory()
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: [
            "--upstream-ca", certificates.ca, "--tls-cert", certificates.certificate, "--tls-key", certificates.key,
            "--fault", "close:4009,after=1s,reason=terminated"])
        let lines = try rig.client(ca: certificates.ca, ["--send", Self.handshake, "--send", Self.bigEvent,
                                                         "--await-close", "--wait", "15"])
        #expect(lines.of(kind: "open").first?["extensions"]?.arrayValue?.first?.stringValue == "permessage-deflate", "\(lines)")
        #expect(lines.received == [Self.handshake, Self.bigEvent])
        let closed = try #require(lines.of(kind: "closed").first)
        #expect(closed["code"]?.intValue == 4009, "\(lines)")
        #expect(closed["reason"]?.stringValue == "terminated")
        let capture = try rig.stopProxy()
        let data = capture.frames.filter { $0.opcode == .text }
        #expect(data.map(\.text) == [Self.handshake, Self.handshake, Self.bigEvent, Self.bigEvent])
        for frame in data {
            #expect(frame.rsv1 && frame.compressed, "relayed compressed, recorded inflated")
        }
        for frame in data where frame.text == Self.bigEvent {
            #expect(frame.length < Self.bigEvent.utf8.count / 2, "len counts the compressed bytes on the wire")
        }
        let injected = try #require(capture.frames.first { $0.opcode == .close && $0.from == .server })
        #expect(injected.closeCode == 4009)
        #expect(!injected.rsv1, "control frames are never compressed")
        #expect(capture.faults.count == 1)

        // The analyzer reads the inflated events: the handshake, then the 4009.
        let analysis = try runFaultline(["analyze", rig.capturePath, "--format", "json"], timeout: 30)
        let report = try JSONParser.parse(analysis.stdout)
        let causes = report["transitions"]?.arrayValue?.compactMap { $0["cause"]?.stringValue } ?? []
        #expect(causes.contains("handshake socket_id 123.456"), "\(analysis.stdout)")
        #expect(causes.contains("close 4009 from server"), "\(analysis.stdout)")
    }

    @Test func unusableTLSFlagsAreRefusedBeforeListening() throws {
        let certificates = try CertDirectory()
        let cases: [([String], String)] = [
            (["--upstream", "ws://127.0.0.1:9", "--upstream-ca", certificates.ca], "--upstream-ca needs a wss:// upstream"),
            (["--upstream", "ws://127.0.0.1:9", "--insecure-upstream"], "--insecure-upstream needs a wss:// upstream"),
            (["--upstream", "wss://127.0.0.1:9", "--upstream-ca", "/nonexistent/ca.pem"], "CA file /nonexistent/ca.pem"),
            (["--upstream", "ws://127.0.0.1:9", "--tls-cert", certificates.certificate], "--tls-cert and --tls-key go together"),
            (["--upstream", "ws://127.0.0.1:9", "--tls-cert", certificates.certificate, "--tls-key", certificates.ca],
             "private key \(certificates.ca)"),
            (["--upstream", "ws://127.0.0.1:9", "--keylog", "/tmp/k.log"], "--keylog needs TLS"),
        ]
        for (arguments, expected) in cases {
            let run = try runFaultline(["proxy", "--listen", "127.0.0.1:0"] + arguments, timeout: 20)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains(expected), "'\(expected)' not in: \(run.stderr)")
        }
    }
}
