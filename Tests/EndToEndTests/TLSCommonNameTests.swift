import Foundation
import Testing
import TestSupport

extension CertDirectory {
    /// A CA and a server certificate made by `openssl`, the server's with `CN=commonName` and
    /// no subjectAltName at all (what old tooling makes, and what browsers refuse).
    init(openSSLCommonNameOnly commonName: String) throws {
        path = TestEnvironment.temporaryDirectory("faultline-cn-only").path
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-subj", "/CN=CN-only test CA", "-keyout", path + "/ca-key.pem", "-out", path + "/ca.pem"],
            ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-subj", "/CN=\(commonName)", "-keyout", path + "/server-key.pem", "-out", path + "/server.csr"],
            // `x509 -req` without -extfile copies no extensions: no subjectAltName.
            ["x509", "-req", "-in", path + "/server.csr", "-CA", path + "/ca.pem", "-CAkey", path + "/ca-key.pem",
             "-CAcreateserial", "-days", "2", "-out", path + "/server.pem"],
        ]
        for step in steps {
            let run = try runCommand("/usr/bin/openssl", step, timeout: 30)
            #expect(run.status == 0, "openssl \(step.first ?? "") failed: \(run.stderr)")
        }
        let text = try runCommand("/usr/bin/openssl", ["x509", "-in", path + "/server.pem", "-noout", "-text"], timeout: 30)
        #expect(text.stdout.contains("CN = \(commonName)") || text.stdout.contains("CN=\(commonName)"))
        #expect(!text.stdout.contains("Subject Alternative Name"), "the certificate must have no SAN")
    }
}

/// The upstream's host name is checked against subjectAltName only (issue 15, item 19).
@Suite(.serialized) struct TLSCommonNameTests {
    @Test func aCertificateWithOnlyACommonNameIsRefused() throws {
        let certificates = try CertDirectory(openSSLCommonNameOnly: "localhost")
        let rig = try TLSProxyRig(serverCertificates: certificates, proxy: ["--upstream-ca", certificates.ca])
        let lines = try rig.client(["--send", "x"])
        let refused = try #require(lines.of(kind: "refused").first, "the CN-only upstream must be refused: \(lines)")
        #expect(refused["status"]?.intValue == 502)
        #expect(refused["body"]?.stringValue?.contains("certificate verify failed: hostname mismatch") == true, "\(refused)")
        let capture = try rig.stopProxy()
        #expect(capture.ends.contains { $0.side == .server && ($0.detail ?? "").contains("hostname mismatch") })
    }
}
