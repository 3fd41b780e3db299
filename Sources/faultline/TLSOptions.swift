import CLI
import Transport

/// The TLS options `proxy` and `replay` share (`--upstream-ca`, `--insecure-upstream`,
/// `--tls-cert`/`--tls-key`, `--keylog`) and the contexts they make. Every file is read
/// here, so a bad one stops the command before it listens or connects.
enum TLSOptions {
    static let upstream: [OptionSpec] = [
        OptionSpec("upstream-ca", value: "file", help: "Verify a wss:// upstream against the CA certificates in this PEM file instead of the system's."),
        OptionSpec("insecure-upstream", help: "Do not verify a wss:// upstream's certificate or host name (a warning is printed)."),
    ]
    static let listener: [OptionSpec] = [
        OptionSpec("tls-cert", value: "file", help: "Serve clients over TLS (wss://) with this PEM certificate chain (see 'faultline cert')."),
        OptionSpec("tls-key", value: "file", help: "The private key (PEM) of --tls-cert."),
    ]
    static let keyLog = OptionSpec("keylog", value: "file", help: "Append TLS secrets in NSS key log format (for Wireshark).")

    struct Contexts {
        /// For a wss:// upstream.
        var upstream: TLSContext?
        /// For the listening side, with --tls-cert and --tls-key.
        var listener: TLSContext?
    }

    /// The contexts `arguments` ask for. `secureUpstream`: the command connects to a wss://
    /// upstream (the upstream options need one); `listens`: it accepts clients (the
    /// listener options need that).
    static func contexts(_ arguments: ParsedArguments, command: String,
                         secureUpstream: Bool, listens: Bool) throws(UsageError) -> Contexts {
        let caFile = arguments.value("upstream-ca")
        let insecure = arguments.flag("insecure-upstream")
        if !secureUpstream {
            if caFile != nil { throw UsageError("\(command): --upstream-ca needs a wss:// upstream") }
            if insecure { throw UsageError("\(command): --insecure-upstream needs a wss:// upstream") }
        }
        if caFile != nil && insecure { throw UsageError("\(command): --upstream-ca and --insecure-upstream contradict each other") }
        let certificate = arguments.value("tls-cert")
        let key = arguments.value("tls-key")
        if (certificate == nil) != (key == nil) { throw UsageError("\(command): --tls-cert and --tls-key go together") }
        if certificate != nil && !listens { throw UsageError("\(command): --tls-cert and --tls-key apply to --listen only") }
        var keyLog: TLSKeyLog?
        if let path = arguments.value("keylog") {
            guard secureUpstream || certificate != nil else {
                throw UsageError("\(command): --keylog needs TLS on a leg (a wss:// upstream or --tls-cert)")
            }
            do { keyLog = try TLSKeyLog(path: path) } catch { throw UsageError("\(command): --keylog \(error)") }
        }
        var contexts = Contexts()
        do {
            if secureUpstream {
                contexts.upstream = try TLSContext.client(caFile: caFile, insecure: insecure, keyLog: keyLog)
            }
            if let certificate, let key {
                contexts.listener = try TLSContext.server(certificateFile: certificate, keyFile: key, keyLog: keyLog)
            }
        } catch {
            throw UsageError("\(command): \(error)")
        }
        return contexts
    }

    /// The warning an unverified upstream deserves, on standard error.
    static func warnIfUnverified(_ context: TLSContext?, command: String) {
        guard let context, !context.verifies else { return }
        Console.err("\(command): warning: --insecure-upstream: the upstream's certificate is NOT verified; anyone on the path can read and change the traffic\n")
    }
}
