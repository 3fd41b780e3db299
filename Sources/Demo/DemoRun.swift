import CLI
import Foundation
import Lifecycle
import ProxyShell
import Sim
import Transport
import Vocabulary

/// One `faultline demo` run: the sim server, the recording proxy with the scenario's faults,
/// and the sim clients, all on one event loop on loopback, for a bounded time. Prints the
/// condensed live view (client state changes, faults fired, findings as they happen).
///
/// Wiring only: the peers are the Sim module's runners, the proxy is `ProxyServer`, the live
/// check is `LiveAnalysis`; the scenario is `DemoScenario`.
package final class DemoRun {
    package let scenario: DemoScenario
    package let duration: Int64
    package let seed: UInt64
    package let capturePath: String
    /// Progress lines go here (standard output by default).
    package var emit: (String) -> Void = { Console.out($0 + "\n") }
    /// What the sim clients reported: (client number, from, to, detail), in order.
    /// SIGINT or SIGTERM ended the run before `duration`.
    package private(set) var interrupted = false
    package private(set) var stateChanges: [(client: Int, from: SimConnectionState, to: SimConnectionState, detail: String)] = []

    package init(scenario: DemoScenario, duration: Int64, seed: UInt64, capturePath: String) {
        self.scenario = scenario
        self.duration = duration
        self.seed = seed
        self.capturePath = capturePath
    }

    /// Runs the whole session; returns when the loop has stopped and everything is closed.
    /// Errors are the setup's (a port, the capture file): nothing is left running.
    package func run() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let simServer = SimServerRunner(loop: loop, settings: scenario.server, seed: seed)
        let serverAddress = try simServer.listen(HostPort(host: "127.0.0.1", port: 0))
        guard let serverPort = serverAddress.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw DemoError("the sim server's address '\(serverAddress)' has no port")
        }

        var settings = ProxySettings(listen: HostPort(host: "127.0.0.1", port: 0),
                                     upstream: try upstream("ws://127.0.0.1:\(serverPort)"))
        settings.recordPath = capturePath
        settings.seed = seed
        settings.faultRules = try scenario.parsedRules()
        settings.recordedSpec = scenario.recordedSpec
        let proxy = ProxyServer(loop: loop, settings: settings, live: nil)
        let analysis = LiveAnalysis(spec: try scenario.spec(), transitions: false)
        analysis.style = .demo
        // The live view goes out in time order (see `LiveViewOrder`).
        var order = LiveViewOrder()
        let show = { [unowned self] (line: String, t: Micros) in
            for ready in order.add(line, at: t) { emit(ready) }
        }
        analysis.emit = { [unowned proxy] line in
            guard line.hasPrefix("live: ") else { return }
            let text = line.dropFirst(6)
            show("  " + text, LiveViewOrder.time(of: text) ?? proxy.now)
        }
        analysis.attach(to: proxy)
        let proxyAddress: String
        do { proxyAddress = try proxy.start() } catch { throw DemoError("the proxy: \(error)") }

        let url = try SimURL.parse("ws://\(proxyAddress)/app/sim-key")
        let clients = SimClientRunner(loop: loop, url: url, clients: scenario.clientSettings, seed: seed)
        clients.onStateChange = { [unowned self, unowned proxy] number, from, to, detail in
            stateChanges.append((number, from, to, detail))
            show("  \(Self.seconds(proxy.now)) s  sim client \(number): \(from.rawValue) -> \(to.rawValue) (\(detail))", proxy.now)
        }
        let release = loop.scheduleRepeating(every: 50_000) { [unowned self, unowned proxy] in
            for line in order.due(at: proxy.now) { emit(line) }
        }

        emit("demo: sim server on \(serverAddress), proxy on \(proxyAddress) recording to \(capturePath)")
        emit("demo: \(scenario.clients) sim clients for \(Self.seconds(duration)) s; faults:")
        for rule in scenario.faultRules { emit("  --fault \(rule)") }
        emit("demo: client 5 runs with --bug \(DemoScenario.bug.rawValue); live view:")

        var finishing = false
        let finish = { [unowned proxy] in
            guard !finishing else { return }
            finishing = true
            clients.disconnectAll()
            // Let the close handshakes go through the proxy before it stops recording.
            loop.schedule(after: 500_000) {
                clients.stop()
                proxy.stop()
                analysis.finish(at: proxy.now)
                release.cancel()
                for line in order.drain() { self.emit(line) }
                simServer.stop()
                loop.stop()
            }
        }
        loop.schedule(after: duration) { finish() }
        let stopEarly: (Int32) -> Void = { [unowned self] _ in
            if !finishing { interrupted = true }
            finish()
        }
        try loop.onSignal(SIGINT, stopEarly)
        try loop.onSignal(SIGTERM, stopEarly)
        clients.feed(0, .connect)
        let count = scenario.clients
        loop.schedule(after: DemoScenario.clientsDelay) {
            for index in 1..<count { clients.feed(index, .connect) }
        }
        loop.run()
    }

    private func upstream(_ text: String) throws -> UpstreamURL {
        switch UpstreamURL.parse(text) {
        case .success(let url): return url
        case .failure(let error): throw DemoError("upstream \(text): \(error)")
        }
    }

    package static func seconds(_ micros: Int64) -> String {
        String(format: "%.3f", Double(micros) / 1_000_000)
    }
}

/// The demo could not be set up; the message says which part and why.
package struct DemoError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
