import Capture
import ControlAPI
import Faults
import Transport
import Vocabulary

/// The proxies of `faultline proxy --toxiproxy-api`: each one created through toxiproxy's
/// API is a `ProxyServer` of its own on the main proxy's loop, with its own listener,
/// upstream (`host:port` means `ws://host:port`), fault engine (its toxics, as rules) and,
/// with `--record FILE`, its own capture `FILE-stem.NAME.jsonl` (`.NAME.2.jsonl` after it
/// was disabled and enabled again, and so on), analyzable like any other. Disabling a proxy
/// resets its open connections and stops its listener, as toxiproxy does. Loop thread only.
package final class ToxiproxyHost: ToxiproxyBackend {
    package struct Entry {
        package var info: ToxiproxyProxy
        package var settings: ProxySettings
        package var server: ProxyServer?
        /// Times it was started, for the capture's name.
        package var runs = 0
    }

    package let loop: EventLoop
    /// The main proxy's settings: limits, seed and `--record` carry over.
    package let base: ProxySettings
    private var entries: [String: Entry] = [:]
    /// Stopped servers whose connections may still be closing: their pairs hold them
    /// `unowned`, so they are kept until the last pair is gone (pruned on each change).
    private var retired: [ProxyServer] = []
    package let version = FaultlineVersion.tool

    package init(loop: EventLoop, base: ProxySettings) {
        self.loop = loop
        self.base = base
    }

    package func proxies() -> [ToxiproxyProxy] { entries.keys.sorted().compactMap { entries[$0]?.info } }

    package func createProxy(name: String, listen: String, upstream: String, enabled: Bool) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        let address: HostPort
        switch HostPort.parse(listen) {
        case .success(let value): address = value
        case .failure(let error): return .failure(.bad("listen: \(error)"))
        }
        let url: UpstreamURL
        switch UpstreamURL.parse(upstream.contains("://") ? upstream : "ws://" + upstream) {
        case .success(let value): url = value
        case .failure(let error): return .failure(.bad("upstream: \(error)"))
        }
        guard !url.secure else { return .failure(.bad("upstream: wss:// is not served for proxies made through the toxiproxy API")) }
        var settings = base
        settings.listen = address
        settings.upstream = url
        settings.faultRules = []
        settings.faultsAlwaysOn = true
        settings.upstreamTLS = nil
        settings.listenerTLS = nil
        var entry = Entry(info: ToxiproxyProxy(name: name, listen: listen, upstream: upstream, enabled: enabled), settings: settings)
        if enabled, let failure = start(&entry) { return .failure(failure) }
        entries[name] = entry
        return .success(entry.info)
    }

    package func setEnabled(_ enabled: Bool, proxy name: String) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        guard var entry = entries[name] else { return .failure(.notFound("proxy not found: \(name)")) }
        if enabled, entry.server == nil {
            if let failure = start(&entry) { return .failure(failure) }
        } else if !enabled {
            stop(&entry)
        }
        entry.info.enabled = enabled
        entries[name] = entry
        return .success(entry.info)
    }

    package func deleteProxy(name: String) -> Bool {
        guard var entry = entries.removeValue(forKey: name) else { return false }
        stop(&entry)
        return true
    }

    package func setToxics(_ toxics: [ToxiproxyToxic], proxy name: String) -> Result<Void, ToxiproxyFailure> {
        guard var entry = entries[name] else { return .failure(.notFound("proxy not found: \(name)")) }
        var rules: [FaultRule] = []
        for toxic in toxics {
            switch toxic.rule() {
            case .success(let rule): rules.append(rule)
            case .failure(let failure): return .failure(failure)
            }
        }
        entry.info.toxics = toxics
        entries[name] = entry
        if let server = entry.server { install(rules, on: server) }
        return .success(())
    }

    /// Stops every proxy (the main proxy is stopping): their captures are completed.
    package func stopAll() {
        for name in entries.keys.sorted() {
            guard var entry = entries[name] else { continue }
            entry.server?.stop()
            entry.server = nil
            entries[name] = entry
        }
    }

    // MARK: -

    private func start(_ entry: inout Entry) -> ToxiproxyFailure? {
        entry.runs += 1
        var settings = entry.settings
        settings.recordPath = base.recordPath.map { Self.capturePath($0, proxy: entry.info.name, run: entry.runs) }
        let server = ProxyServer(loop: loop, settings: settings, live: nil)
        let bound: String
        do { bound = try server.start() } catch {
            return .bad("proxy \(entry.info.name) cannot start on \(entry.info.listen): \(error)")
        }
        // Enabled again later, it listens on the same port.
        if case .success(let address) = HostPort.parse(bound) { entry.settings.listen = address }
        entry.info.listen = bound
        entry.server = server
        install(entry.info.toxics.compactMap { try? $0.rule().get() }, on: server)
        return nil
    }

    private func stop(_ entry: inout Entry) {
        guard let server = entry.server else { return }
        if let reset = try? FaultRule.parse("reset") {
            for pair in server.allPairs {
                server.faultEngine.applyNow(reset, to: pair.id)
                server.faultsChanged(connection: pair.id)
            }
        }
        server.stop()
        entry.server = nil
        retired.removeAll { $0.openConnections == 0 }
        retired.append(server)
    }

    private func install(_ rules: [FaultRule], on server: ProxyServer) {
        server.faultEngine.reset()
        for rule in rules { server.faultEngine.add(rule) }
        server.faultsChanged(connection: nil)
    }

    /// "run/cap.jsonl" -> "run/cap.NAME.jsonl" (run 1), "run/cap.NAME.2.jsonl" (run 2), ...
    package static func capturePath(_ path: String, proxy: String, run: Int) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let file = path[slash...]
        let stem = file.firstIndex(of: ".").map { String(path[..<$0]) } ?? path
        let suffix = file.firstIndex(of: ".").map { String(path[$0...]) } ?? ""
        return stem + "." + proxy + (run > 1 ? ".\(run)" : "") + suffix
    }
}
