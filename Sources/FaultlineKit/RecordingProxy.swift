import Faults
import Foundation
import Lifecycle
import ProxyShell
import Sim
import Synchronization
import Transport
import Vocabulary

/// A recording Faultline proxy inside your test process: start it on an ephemeral loopback
/// port with fault rules, point the client under test at `url`, then `stop()` it and assert
/// on the `Recording`'s findings. No subprocess, no fixed ports, nothing printed.
///
///     let proxy = try await RecordingProxy.start(upstream: .simulatedServer,
///                                                faults: [.close(code: 1011, after: .milliseconds(100))],
///                                                spec: "websocket")
///     await runMyClient(connectingTo: proxy.url)
///     let recording = await proxy.stop()
///     #expect(recording.findings.isEmpty, "\(recording.findings)")
///
/// The proxy runs on a thread of its own (its own event loop), so the client may block,
/// use threads or `async` code as it likes; `start` and `stop` suspend, never block, the
/// calling task. The proxy is the one `faultline proxy` runs: the same relay, fault rules
/// (`faultline help proxy` lists them), live analysis and capture format.
public final class RecordingProxy: Sendable {
    /// Where the proxy relays to.
    public enum Upstream: Sendable, Hashable {
        /// A WebSocket server of yours: `ws://HOST:PORT[/PATH]` or `wss://...` (verified
        /// against the system trust store).
        case url(String)
        /// Faultline's simulated Bird/Pusher server (what `faultline sim server` runs),
        /// started on another ephemeral port beside the proxy: a realistic upstream for a
        /// client test that has no server of its own.
        case simulatedServer
    }

    /// `ws://127.0.0.1:PORT`: where the client under test connects (append its path).
    public let url: String
    /// The proxy's port on 127.0.0.1, chosen by the kernel.
    public let port: Int
    /// The upstream actually used (the simulated server's URL for `.simulatedServer`).
    public let upstreamURL: String
    /// The capture file being written, if `start` was given one.
    public let recordingPath: String?

    private let remote: LoopRemote
    /// Fulfilled by the loop thread once it has wound down (internal: tests wait on it).
    let finished: Handoff<Recording>
    private let stopped = Mutex(false)

    /// At most this many findings and problems are kept; past that, a problem says how many
    /// were left out (a client looping on a fault must not grow the test's memory without end).
    static let keptLimit = 10_000

    private init(port: Int, upstreamURL: String, recordingPath: String?, remote: LoopRemote, finished: Handoff<Recording>) {
        self.url = "ws://127.0.0.1:\(port)"
        self.port = port
        self.upstreamURL = upstreamURL
        self.recordingPath = recordingPath
        self.remote = remote
        self.finished = finished
    }

    /// Starts the proxy and returns once it listens. `faults` are fault rules, typed
    /// (`.close(code: 4009, after: .seconds(3))`) or as `faultline proxy --fault` takes them
    /// ("close:4009,after=3s"); `spec` is the lifecycle spec the traffic is checked against
    /// as it passes (a built-in spec: bird, pusher, websocket, agora-rtm, agora-rtm-stream,
    /// or a spec file's path); `recordingTo` writes the capture there too, replacing an
    /// existing file; `seed` makes `prob=` and `jitter=` repeat exactly. Throws
    /// `FaultlineKitError` for a bad rule, spec or URL, or a port or file that cannot be
    /// opened; nothing is left running then.
    public static func start(upstream: Upstream, faults: [Fault] = [], spec: String = "bird",
                             recordingTo path: String? = nil, seed: UInt64 = 0) async throws(FaultlineKitError) -> RecordingProxy {
        var parsed: [FaultRule] = []
        for fault in faults {
            do { parsed.append(try FaultRule.parse(fault.rule)) } catch { throw FaultlineKitError("fault rule '\(fault.rule)': \(error)") }
        }
        let rules = parsed
        let loadedSpec = try Recording.loadSpec(spec)
        let started = Handoff<Result<(remote: LoopRemote, address: String, upstream: String), FaultlineKitError>>()
        let finished = Handoff<Recording>()
        let thread = Thread {
            let loop: EventLoop
            do { loop = try EventLoop() } catch {
                started.fulfill(.failure(FaultlineKitError("event loop: \(error)")))
                return
            }
            // Loop-thread state: filled by the server's and the analysis's callbacks.
            var problems: [String] = []
            var findings: [Finding] = []
            var leftOut = 0
            let running: (server: ProxyServer, simulator: SimServerRunner?, upstream: String)
            do throws(FaultlineKitError) {
                running = try serve(loop: loop, upstream: upstream, rules: rules, path: path, seed: seed) { server in
                    server.onProblem = { message in
                        if problems.count < keptLimit { problems.append(message) } else { leftOut += 1 }
                    }
                }
            } catch {
                loop.close()
                started.fulfill(.failure(error))
                return
            }
            let analysis = LiveAnalysis(spec: loadedSpec, transitions: false)
            analysis.emit = { _ in }
            analysis.attach(to: running.server)
            analysis.onFinding = { finding in
                if findings.count < keptLimit { findings.append(Finding(finding)) } else { leftOut += 1 }
            }
            started.fulfill(.success((loop.remote, running.server.listenAddress, running.upstream)))
            loop.run()
            running.server.stop()
            analysis.finish(at: running.server.now)
            running.simulator?.stop()
            // Closing the loop runs the sockets' last callbacks, which still reach the
            // server, the analysis and the simulator: they must outlive it.
            withExtendedLifetime((running, analysis)) { loop.close() }
            if leftOut > 0 { problems.append("\(leftOut) findings and problems past the first \(keptLimit) were left out") }
            finished.fulfill(Recording(findings: findings, spec: spec, problems: problems, path: path))
        }
        thread.name = "faultline-proxy"
        thread.start()
        switch await started.value() {
        case .success(let value):
            let port = value.address.split(separator: ":").last.flatMap { Int($0) } ?? 0
            return RecordingProxy(port: port, upstreamURL: value.upstream, recordingPath: path,
                                  remote: value.remote, finished: finished)
        case .failure(let error):
            throw error
        }
    }

    /// Loop thread: the simulated server (if asked for) and the proxy, started; `prepare`
    /// sees the server before it starts.
    private static func serve(loop: EventLoop, upstream: Upstream, rules: [FaultRule], path: String?, seed: UInt64,
                              prepare: (ProxyServer) -> Void)
        throws(FaultlineKitError) -> (server: ProxyServer, simulator: SimServerRunner?, upstream: String) {
        var simulator: SimServerRunner?
        let upstreamText: String
        switch upstream {
        case .url(let text):
            upstreamText = text
        case .simulatedServer:
            let runner = SimServerRunner(loop: loop, settings: SimServerSettings(), seed: seed)
            do {
                upstreamText = "ws://" + (try runner.listen(HostPort(host: "127.0.0.1", port: 0)))
            } catch {
                throw FaultlineKitError("simulated server: \(error)")
            }
            simulator = runner
        }
        let upstreamURL: UpstreamURL
        switch UpstreamURL.parse(upstreamText) {
        case .success(let value): upstreamURL = value
        case .failure(let error):
            simulator?.stop()
            throw FaultlineKitError("upstream \(upstreamText): \(error)")
        }
        var settings = ProxySettings(listen: HostPort(host: "127.0.0.1", port: 0), upstream: upstreamURL)
        settings.recordPath = path
        settings.overwriteRecord = true
        settings.faultRules = rules
        settings.seed = seed
        if upstreamURL.secure {
            do { settings.upstreamTLS = try TLSContext.client() } catch {
                simulator?.stop()
                throw FaultlineKitError("TLS for \(upstreamText): \(error)")
            }
        }
        let server = ProxyServer(loop: loop, settings: settings, live: nil)
        prepare(server)
        do {
            try server.start()
        } catch {
            simulator?.stop()
            throw FaultlineKitError("proxy: \(error)")
        }
        return (server, simulator, upstreamText)
    }

    /// Stops the proxy (open connections are cut and marked as ended by the end of the
    /// capture), finishes the analysis, closes the capture and returns the recording; it
    /// suspends until all of that is done. Calling it again returns the same recording.
    @discardableResult
    public func stop() async -> Recording {
        let first = stopped.withLock { wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }
        if first { remote.stop() }
        return await finished.value()
    }

    /// A proxy dropped without `stop()` is stopped in the background; nothing waits for it.
    deinit {
        if stopped.withLock({ !$0 }) { remote.stop() }
    }
}

/// A value one thread hands, once, to any number of async waiters: they suspend until it
/// is there, never blocking a thread.
final class Handoff<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }
    private let state = Mutex(State())

    func fulfill(_ value: Value) {
        let waiters = state.withLock { state in
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state in
                if let value = state.value { return Optional(value) }
                state.waiters.append(continuation)
                return nil
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
