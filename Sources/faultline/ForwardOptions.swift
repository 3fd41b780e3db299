import CLI
import ProxyShell
import Transport

/// `faultline proxy --forward` and its options: an HTTP proxy for any host (CONNECT and
/// absolute-form requests) instead of a reverse proxy for one `--upstream`.
enum ForwardOptions {
    static let options: [OptionSpec] = [
        OptionSpec("forward", help: "Be an HTTP proxy (CONNECT and absolute URLs) for any host instead of a reverse proxy for --upstream; point clients' HTTP_PROXY/HTTPS_PROXY or proxy setting at --listen."),
        OptionSpec("tls-ca", value: "file", help: "With --forward: intercept TLS, presenting certificates minted per host and signed by this CA certificate (PEM, from 'faultline cert'); without it TLS tunnels pass untouched."),
        OptionSpec("tls-ca-key", value: "file", help: "The private key (PEM) of --tls-ca."),
        OptionSpec("passthrough", value: "host", help: "With --forward: tunnel this host untouched (apps that pin certificates); '*.example.com' for a domain; repeatable.", repeatable: true),
    ]

    /// What `ProxySettings.upstream` holds in forward mode: every pair has its own target.
    static let noUpstream = UpstreamURL(host: "forward", port: 1, secure: false, pathPrefix: "")

    /// Forward mode's settings, or nil without `--forward` (then its options are refused).
    static func settings(from arguments: ParsedArguments, command: String) throws(UsageError) -> ForwardSettings? {
        let caFile = arguments.value("tls-ca")
        let keyFile = arguments.value("tls-ca-key")
        let passthrough = arguments.all("passthrough")
        guard arguments.flag("forward") else {
            if caFile != nil || keyFile != nil { throw UsageError("\(command): --tls-ca and --tls-ca-key need --forward") }
            if !passthrough.isEmpty { throw UsageError("\(command): --passthrough needs --forward") }
            return nil
        }
        if arguments.value("upstream") != nil {
            throw UsageError("\(command): --forward and --upstream exclude each other (a forward proxy's upstream is whatever each client asks for)")
        }
        if arguments.value("tls-cert") != nil || arguments.value("tls-key") != nil {
            throw UsageError("\(command): --tls-cert/--tls-key do not apply to --forward (clients reach it over plain HTTP; use --tls-ca to intercept TLS)")
        }
        if (caFile == nil) != (keyFile == nil) { throw UsageError("\(command): --tls-ca and --tls-ca-key go together") }
        for host in passthrough where host.isEmpty || host.contains(":") && !TLSCertificates.isIPAddress(host) || host.contains("/") {
            throw UsageError("\(command): --passthrough '\(host)': expected a host name, such as api.example.com or *.example.com")
        }
        var settings = ForwardSettings(passthrough: passthrough)
        if let caFile, let keyFile {
            let identity = TLSIdentity(certificatePEM: try read(caFile, flag: "--tls-ca", command: command),
                                       privateKeyPEM: try read(keyFile, flag: "--tls-ca-key", command: command))
            do {
                _ = try TLSLeafMinter(authority: identity)
            } catch {
                throw UsageError("\(command): --tls-ca \(caFile) / --tls-ca-key \(keyFile): \(error.message)")
            }
            settings.authority = identity
        }
        return settings
    }

    private static func read(_ path: String, flag: String, command: String) throws(UsageError) -> String {
        do { return try SmallTextFile.read(path) } catch { throw UsageError("\(command): \(flag) \(error.description)") }
    }
}
