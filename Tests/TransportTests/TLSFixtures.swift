import Foundation
import TestSupport
@testable import Transport

/// A CA and a server certificate made by our own code, written to a fresh directory.
struct TLSFiles {
    let directory: URL
    let caFile: String
    let certificateFile: String
    let keyFile: String

    /// `hosts` go into the server certificate's subjectAltName; `days <= 0` makes it expired.
    init(hosts: [String] = ["localhost", "127.0.0.1"], days: Int = 30, label: String = "tls") throws {
        directory = TestEnvironment.temporaryDirectory(label)
        let authority = try TLSCertificates.makeAuthority()
        let server = try TLSCertificates.makeServer(hosts: hosts, authority: authority, days: days)
        caFile = directory.appendingPathComponent("ca.pem").path
        certificateFile = directory.appendingPathComponent("server.pem").path
        keyFile = directory.appendingPathComponent("server-key.pem").path
        try authority.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        try server.certificatePEM.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        try server.privateKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
    }

    func serverContext(keyLog: TLSKeyLog? = nil) throws -> TLSContext {
        try TLSContext.server(certificateFile: certificateFile, keyFile: keyFile, keyLog: keyLog)
    }
}

/// What one TLS client attempt against a `TLSListener` came to.
final class TLSOutcome {
    var clientError: TransportError?
    var serverErrors: [TransportError] = []
    var version = ""
    var serverSawName: String?
    var received: [UInt8] = []
    var serverEnds: [StreamEnd] = []
    var serverSawCloseNotify = false
}
