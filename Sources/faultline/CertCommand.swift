import CLI
import Foundation
import Glibc
import Transport

/// `faultline cert --out DIR [--host NAME]... [--days N]`: a local certificate authority and
/// a server certificate it signs, so a QA engineer gets a working `wss://` proxy in two
/// commands. The CA in DIR is reused when present, so it is trusted once and later runs
/// only mint new server certificates.
enum CertCommand: Command {
    static let spec = CommandSpec(
        name: "cert",
        abstract: "Make a local CA and a server certificate for a wss:// proxy.",
        discussion: """
            Writes ca.pem and ca-key.pem (a local certificate authority, made once and reused
            while both files exist in DIR) and server.pem and server-key.pem (a certificate for
            every --host, in its subjectAltName, signed by that CA). Keys are ECDSA P-256 and
            written with mode 0600. Then prints how to trust the CA in curl, Python, Node.js,
            browsers and Debian's system store. Give the server files to
            'faultline proxy --tls-cert DIR/server.pem --tls-key DIR/server-key.pem'.
            """,
        options: [
            OptionSpec("out", value: "dir", help: "The directory to write to (created if missing).", required: true),
            OptionSpec("host", value: "name", help: "A host name or IP address the server certificate is for; repeatable (default: localhost, 127.0.0.1 and ::1).",
                       repeatable: true),
            OptionSpec("days", value: "n", help: "Days the server certificate is valid. Zero or negative makes one that has already expired (for testing clients; use --days=-1).",
                       default: "825"),
        ])

    static let defaultHosts = ["localhost", "127.0.0.1", "::1"]

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let out = try arguments.required("out")
        let days = try arguments.parse("days", as: "a whole number of days") { Int($0).flatMap { abs($0) <= 36_500 ? $0 : nil } } ?? 825
        var hosts = arguments.all("host")
        if hosts.isEmpty { hosts = defaultHosts }
        for host in hosts where host.isEmpty || host.contains(where: { $0 == "," || $0 == " " || $0 == "/" || $0 == ":" && !TLSCertificates.isIPAddress(host) }) {
            throw UsageError("faultline cert: invalid value '\(host)' for '--host': expected a host name or an IP address")
        }
        let directory = URL(fileURLWithPath: out)
        let files = CertFiles(directory: directory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return fail("cannot create directory \(out): \(error.localizedDescription)")
        }
        let now = Int(time(nil))
        let authority: TLSIdentity
        let reused: Bool
        do {
            if let existing = try files.existingAuthority() {
                authority = existing
                reused = true
            } else {
                authority = try TLSCertificates.makeAuthority(now: now)
                reused = false
                try write(authority.certificatePEM, to: files.ca, mode: 0o644)
                try write(authority.privateKeyPEM, to: files.caKey, mode: 0o600)
            }
            let server = try TLSCertificates.makeServer(hosts: hosts, authority: authority, days: days, now: now)
            try write(server.certificatePEM, to: files.server, mode: 0o644)
            try write(server.privateKeyPEM, to: files.serverKey, mode: 0o600)
        } catch {
            return fail(error.message)
        }
        Console.out(report(files: files, hosts: hosts, days: days, now: now, reused: reused))
        return ExitStatus.success
    }

    private static func fail(_ message: String) -> Int32 {
        Console.err("faultline cert: \(message)\n")
        return ExitStatus.failure
    }

    /// Writes `text` to `path` with `mode` from the start (a key is never world-readable,
    /// not even for a moment), replacing any older file.
    private static func write(_ text: String, to path: String, mode: mode_t) throws(TransportError) {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw TransportError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw TransportError("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    /// What was written and how to trust the CA.
    static func report(files: CertFiles, hosts: [String], days: Int, now: Int, reused: Bool) -> String {
        let until = date(now + days * 86_400)
        let validity = days > 0 ? "valid until \(until)" : "ALREADY EXPIRED (--days \(days)), for testing clients"
        return """
            faultline cert: wrote \(files.directory.path)
              ca.pem           the local certificate authority (\(reused ? "reused from an earlier run" : "new")): trust this file
              ca-key.pem       its private key: keep it private (it can sign for any name)
              server.pem       certificate for \(hosts.joined(separator: ", ")), \(validity)
              server-key.pem   its private key

            Run a wss:// proxy with it:
              faultline proxy --listen 127.0.0.1:8443 --tls-cert \(files.server) --tls-key \(files.serverKey) --upstream wss://HOST/PATH
            and connect clients to wss://\(hosts[0].contains(":") ? "[\(hosts[0])]" : hosts[0]):8443/PATH.

            Trust the CA:
              curl            curl --cacert \(files.ca) https://...
              Python          SSL_CERT_FILE=\(files.ca) python3 ...   (or ssl.create_default_context(cafile="\(files.ca)"))
              Node.js         NODE_EXTRA_CA_CERTS=\(files.ca) node ...
              Debian/Ubuntu   sudo cp \(files.ca) /usr/local/share/ca-certificates/faultline-ca.crt && sudo update-ca-certificates
              Firefox         Settings > Privacy & Security > Certificates > View Certificates > Authorities > Import \(files.ca)
              Chrome (Linux)  chrome://settings/certificates > Authorities > Import \(files.ca)
              macOS           sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(files.ca)
              Android/iOS     install \(files.ca) as a user CA certificate (Android apps must opt in via network_security_config)

            """
    }

    private static func date(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02d %02d:%02d UTC", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min))
    }
}

/// The four files of `faultline cert` in one directory.
struct CertFiles {
    let directory: URL
    var ca: String { directory.appendingPathComponent("ca.pem").path }
    var caKey: String { directory.appendingPathComponent("ca-key.pem").path }
    var server: String { directory.appendingPathComponent("server.pem").path }
    var serverKey: String { directory.appendingPathComponent("server-key.pem").path }

    /// The CA already in the directory, if both its files are there and readable.
    func existingAuthority() throws(TransportError) -> TLSIdentity? {
        guard let certificate = try? String(contentsOfFile: ca, encoding: .utf8),
              let key = try? String(contentsOfFile: caKey, encoding: .utf8) else { return nil }
        let identity = TLSIdentity(certificatePEM: certificate, privateKeyPEM: key)
        do {
            try TLSCertificates.validate(identity)
        } catch {
            throw TransportError("\(ca) / \(caKey) exist but are not a usable CA (\(error.message)); move them away to make a new one")
        }
        return identity
    }
}
