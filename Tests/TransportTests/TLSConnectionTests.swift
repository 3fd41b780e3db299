import Foundation
import Testing
@testable import Transport

@Suite(.serialized)
struct TLSConnectionTests {
    /// An echo server over TLS on loopback, and one client that sends `message`, reads it
    /// back, then shuts down (close_notify). Returns what both sides saw.
    func roundTrip(files: TLSFiles, client: TLSContext, serverName: String?, message: [UInt8],
                   serverKeyLog: TLSKeyLog? = nil) throws -> TLSOutcome {
        let loop = try EventLoop()
        let outcome = TLSOutcome()
        let listener = try TLSListener(loop: loop, port: 0, context: try files.serverContext(keyLog: serverKeyLog)) { connection in
            outcome.serverSawName = connection.requestedServerName
            connection.onRead = { bytes in
                connection.write(bytes)
                if connection.isOverHighWater { connection.pauseReading() }
            }
            connection.onDrain = { connection.resumeReading() }
            connection.onEnd = { end in
                outcome.serverEnds.append(end)
                outcome.serverSawCloseNotify = connection.peerSentCloseNotify
                connection.closeAfterFlush()
            }
        }
        listener.onHandshakeError = { error in
            outcome.serverErrors.append(error)
            if outcome.clientError != nil { loop.stop() }
        }
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port, context: client,
                             serverName: serverName, timeout: 5_000_000) { result in
            switch result {
            case .failure(let error):
                outcome.clientError = error
                // Wait for the server's side of the story too (bounded by a timer).
                if !outcome.serverErrors.isEmpty { loop.stop() }
                _ = loop.schedule(after: 2_000_000) { loop.stop() }
            case .success(let connection):
                outcome.version = connection.protocolVersion
                connection.onRead = { bytes in
                    outcome.received += bytes
                    if outcome.received.count == message.count { connection.shutdown() }
                }
                connection.onEnd = { _ in connection.close() }
                connection.onClose = { loop.stop() }
                connection.write(message)
            }
        }
        runBounded(loop)
        return outcome
    }

    @Test func clientAndServerExchangeBytesAndEndWithCloseNotify() throws {
        let files = try TLSFiles()
        let message = Array("hello over TLS".utf8) + (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let client = try TLSContext.client(caFile: files.caFile)
        let outcome = try roundTrip(files: files, client: client, serverName: "localhost", message: message)
        #expect(outcome.clientError == nil)
        #expect(outcome.serverErrors.isEmpty)
        #expect(outcome.version == "TLSv1.3")
        #expect(outcome.serverSawName == "localhost")
        #expect(outcome.received.count == message.count)
        #expect(outcome.received == message)
        #expect(outcome.serverEnds == [.fin])
        #expect(outcome.serverSawCloseNotify)
    }

    @Test func anIPAddressIsVerifiedAgainstTheIPInSubjectAltName() throws {
        let files = try TLSFiles(hosts: ["127.0.0.1"])
        let outcome = try roundTrip(files: files, client: try TLSContext.client(caFile: files.caFile),
                                    serverName: "127.0.0.1", message: Array("ip".utf8))
        #expect(outcome.clientError == nil)
        #expect(outcome.received == Array("ip".utf8))
        #expect(outcome.serverSawName == nil, "no SNI is sent for an IP address")
    }

    @Test func aCertificateFromAnotherCAIsRefusedWithTheReason() throws {
        let files = try TLSFiles()
        let other = try TLSFiles(label: "tls-other-ca")
        let outcome = try roundTrip(files: files, client: try TLSContext.client(caFile: other.caFile),
                                    serverName: "localhost", message: Array("x".utf8))
        let error = try #require(outcome.clientError)
        #expect(error.message.hasPrefix("TLS handshake with localhost:"))
        #expect(error.message.hasSuffix("failed: certificate verify failed: unable to get local issuer certificate"),
                "\(error.message)")
        // The client's alert tells the server why.
        #expect(outcome.serverErrors.first?.message.contains("unknown ca") == true, "\(outcome.serverErrors)")
    }

    @Test func aWrongHostNameIsRefusedWithTheReason() throws {
        let files = try TLSFiles(hosts: ["localhost"])
        let outcome = try roundTrip(files: files, client: try TLSContext.client(caFile: files.caFile),
                                    serverName: "wrong.example", message: Array("x".utf8))
        let error = try #require(outcome.clientError)
        #expect(error.message.hasSuffix("certificate verify failed: hostname mismatch"), "\(error.message)")
    }

    @Test func anExpiredCertificateIsRefusedWithTheReason() throws {
        let files = try TLSFiles(days: -1)
        let outcome = try roundTrip(files: files, client: try TLSContext.client(caFile: files.caFile),
                                    serverName: "localhost", message: Array("x".utf8))
        let error = try #require(outcome.clientError)
        #expect(error.message.hasSuffix("certificate verify failed: certificate has expired"), "\(error.message)")
    }

    @Test func theSystemTrustStoreDoesNotKnowOurLocalCA() throws {
        let files = try TLSFiles()
        let outcome = try roundTrip(files: files, client: try TLSContext.client(), serverName: "localhost",
                                    message: Array("x".utf8))
        let error = try #require(outcome.clientError)
        #expect(error.message.contains("certificate verify failed"), "\(error.message)")
    }

    @Test func insecureSkipsVerification() throws {
        let files = try TLSFiles(days: -1)
        let outcome = try roundTrip(files: files, client: try TLSContext.client(insecure: true),
                                    serverName: "wrong.example", message: Array("anyway".utf8))
        #expect(outcome.clientError == nil)
        #expect(outcome.received == Array("anyway".utf8))
    }

    @Test func aPlainTCPClientFailsTheServerHandshakeWithTheReason() throws {
        let files = try TLSFiles()
        let loop = try EventLoop()
        var errors: [TransportError] = []
        let listener = try TLSListener(loop: loop, port: 0, context: try files.serverContext()) { _ in
            Issue.record("a plain HTTP request must not complete a TLS handshake")
        }
        listener.onHandshakeError = { error in
            errors.append(error)
            loop.stop()
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let tcp) = result else { loop.stop(); return }
            tcp.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            tcp.onEnd = { _ in tcp.close() }
        }
        runBounded(loop)
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("failed: http request") == true, "\(errors)")
    }

    @Test func badFilesAreNamedInTheError() throws {
        let files = try TLSFiles()
        #expect(throws: TransportError.self) { try TLSContext.client(caFile: "/nonexistent/ca.pem") }
        do {
            _ = try TLSContext.server(certificateFile: files.certificateFile, keyFile: files.caFile)
            Issue.record("a certificate is not a key")
        } catch {
            #expect(error.message.hasPrefix("private key \(files.caFile):"), "\(error.message)")
        }
        let other = try TLSFiles(label: "tls-other")
        do {
            _ = try TLSContext.server(certificateFile: files.certificateFile, keyFile: other.keyFile)
            Issue.record("a key of another certificate must be refused")
        } catch {
            #expect(error.message.contains("does not match") || error.message.contains("values mismatch"), "\(error.message)")
        }
    }

    @Test func theKeyLogHoldsTLS13SecretsInNSSFormat() throws {
        let files = try TLSFiles()
        let path = files.directory.appendingPathComponent("keys.log").path
        let keyLog = try TLSKeyLog(path: path)
        let client = try TLSContext.client(caFile: files.caFile, keyLog: keyLog)
        let outcome = try roundTrip(files: files, client: client, serverName: "localhost", message: Array("k".utf8))
        #expect(outcome.clientError == nil)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let labels = Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(labels.isSuperset(of: ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                                       "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"]), "\(labels)")
        for line in lines {
            let fields = line.split(separator: " ")
            #expect(fields.count == 3, "\(line)")
            #expect(fields.count == 3 && fields[1].count == 64, "client random is 32 bytes of hex: \(line)")
        }
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
    }
}
