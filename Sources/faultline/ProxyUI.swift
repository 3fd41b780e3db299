import CLI
import ControlAPI
import ProxyShell
import Transport
import UI
import Vocabulary

/// `faultline proxy --ui [HOST:]PORT`: the web UI on the proxy's own loop, fed by every
/// record the proxy makes and every event of its live analysis, acting through the same
/// control contract as `--control`.
enum ProxyUI {
    static let options: [OptionSpec] = [
        OptionSpec("ui", value: "[host:]port",
                   help: "Serve the web UI here (docs/ui.md; a bare port means 127.0.0.1); another address than loopback needs a token. Turns on the live check (--spec, default bird)."),
        OptionSpec("ui-token", value: "token", help: "Require this token on the UI: open it once as http://HOST:PORT/?token=TOKEN (shows in 'ps': prefer the next one)."),
        OptionSpec("ui-token-file", value: "file", help: "Read the UI token from the first line of FILE (default: $\(ControlToken.environmentName))."),
    ]

    /// `--ui`'s address, checked before anything starts; nil without `--ui`.
    static func address(_ arguments: ParsedArguments, command: String) throws(UsageError) -> HostPort? {
        guard let text = arguments.value("ui") else {
            if arguments.value("ui-token") != nil || arguments.value("ui-token-file") != nil {
                throw UsageError("\(command): --ui-token needs --ui")
            }
            return nil
        }
        let full = text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) ? "127.0.0.1:\(text)" : text
        guard case .success(let address) = HostPort.parse(full) else {
            throw UsageError("\(command): --ui '\(text)' is not [HOST:]PORT (for example 8080 or 127.0.0.1:8080; port 0 picks one)")
        }
        let token = try ControlToken.resolve(arguments, flag: "ui-token", command: command)
        if !LoopbackHost.isLoopback(host: address.host), token == nil {
            throw UsageError("\(command): --ui \(text): not a loopback address; the UI can break every proxied connection, so it needs a token (--ui-token-file FILE, or \(ControlToken.environmentName))")
        }
        return address
    }

    /// The UI for the flags, fed by `server` and `analysis`; nil without `--ui`. Call on the
    /// loop thread after the proxy started.
    static func start(_ arguments: ParsedArguments, loop: EventLoop, server: ProxyServer, analysis: LiveAnalysis,
                      command: String = "faultline proxy") throws(UsageError) -> UIServer? {
        guard let address = try address(arguments, command: command) else { return nil }
        let token = try ControlToken.resolve(arguments, flag: "ui-token", command: command)
        let model = UIModel(spec: analysis.spec)
        let ui: UIServer
        do {
            ui = try UIServer.start(loop: loop, host: address.host, port: address.port, token: token, model: model, backend: server)
        } catch {
            throw UsageError("\(command): --ui \(address): \(error)")
        }
        let previous = server.recordObserver
        server.recordObserver = { record in
            model.observe(record)
            previous?(record)
        }
        analysis.onEvents = { events, now in
            for event in events { model.observe(event) }
            model.advance(to: now)
        }
        return ui
    }
}
