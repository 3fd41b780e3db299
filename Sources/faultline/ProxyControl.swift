import CLI
import ControlAPI
import Transport
import Vocabulary

/// The proxy's control flags (`--control HOST:PORT`, `--control-token T`,
/// `--control-allow-remote`) turned into a running `ControlServer`, so the proxy command's
/// hook is one call.
enum ProxyControl {
    static let options: [OptionSpec] = [
        OptionSpec("control", value: "host:port", help: "Serve the control API (HTTP/JSON) here; loopback only unless --control-allow-remote."),
        OptionSpec("control-token", value: "token", help: "Require 'Authorization: Bearer TOKEN' on the control API (shows in 'ps': prefer the next two)."),
        OptionSpec("control-token-file", value: "file", help: "Read the control API token from the first line of FILE (default: $FAULTLINE_CONTROL_TOKEN)."),
        OptionSpec("control-allow-remote", help: "Let the control API listen on a non-loopback address (needs a token)."),
    ]

    /// Checks the flags before anything starts: whether `--control` is given, with a usable
    /// address (loopback unless `--control-allow-remote`); `--control-token` needs it.
    static func check(_ arguments: ParsedArguments, command: String = "faultline proxy") throws(UsageError) -> Bool {
        guard let text = arguments.value("control") else {
            if arguments.value("control-token") != nil { throw UsageError("\(command): --control-token needs --control") }
            if arguments.value("control-token-file") != nil { throw UsageError("\(command): --control-token-file needs --control") }
            if arguments.flag("control-allow-remote") { throw UsageError("\(command): --control-allow-remote needs --control") }
            return false
        }
        guard case .success(let address) = HostPort.parse(text) else {
            throw UsageError("\(command): --control '\(text)' is not HOST:PORT (for example 127.0.0.1:8474; port 0 picks one)")
        }
        if !LoopbackHost.isLoopback(host: address.host), !arguments.flag("control-allow-remote") {
            throw UsageError("\(command): --control \(text): not a loopback address; anyone who can reach it can break every proxied connection (allow it with --control-allow-remote, ideally with --control-token)")
        }
        let token = try ControlToken.resolve(arguments, flag: "control-token", command: command)
        if arguments.flag("control-allow-remote"), token == nil {
            throw UsageError("\(command): --control-allow-remote needs a token (--control-token-file FILE, or \(ControlToken.environmentName)); without one anyone who can reach the API can break every proxied connection")
        }
        return true
    }

    /// The server for the flags, or nil without `--control`. Call on the loop thread.
    static func start(_ arguments: ParsedArguments, loop: EventLoop, backend: any ControlBackend,
                      command: String = "faultline proxy") throws(UsageError) -> ControlServer? {
        let token = try ControlToken.resolve(arguments, flag: "control-token", command: command)
        guard let text = arguments.value("control") else {
            if arguments.value("control-token") != nil { throw UsageError("\(command): --control-token needs --control") }
            return nil
        }
        guard case .success(let address) = HostPort.parse(text) else {
            throw UsageError("\(command): --control '\(text)' is not HOST:PORT (for example 127.0.0.1:8474; port 0 picks one)")
        }
        do {
            return try ControlServer.start(loop: loop, host: address.host, port: address.port, token: token,
                                           allowRemote: arguments.flag("control-allow-remote"), backend: backend)
        } catch {
            throw UsageError("\(command): --control \(text): \(error)")
        }
    }
}
