import Faults
import Foundation
import ProxyShell
import Sim
import Synchronization
import Transport
import Vocabulary

/// A recording Faultline proxy inside your test process: start it on an ephemeral loopback
/// port with fault rules, point the client under test at `url`, then `stop()` it and read
/// the `Recording`'s findings. No subprocess, no fixed ports.
///
///     let proxy = try RecordingProxy.start(upstream: .simulatedServer,
///                                          faults: ["close:1011,after=100ms"],
///                                          recordingTo: "/tmp/session.jsonl")
///     runMyClient(connectingTo: proxy.url)
///     let findings = try proxy.stop().findings(spec: "websocket")
///
/// The proxy runs on a thread of its own (its own event loop), so the client may block,
/// use threads or `async` code as it likes. The proxy is the one `faultline proxy` runs:
/// the same relay, fault rules (`faultline help proxy` lists them) and capture format.
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
    /// The capture file being written.
    public let recordingPath: String

    private let remote: LoopRemote
    private let finished: DispatchSemaphore
    private let stopped = Mutex(false)

    private init(port: Int, upstreamURL: String, recordingPath: String, remote: LoopRemote, finished: DispatchSemaphore) {
        self.url = "ws://127.0.0.1:\(port)"
        self.port = port
        self.upstreamURL = upstreamURL
        self.recordingPath = recordingPath
        self.remote = remote
        self.finished = finished
    }

    /// Starts the proxy and returns once it listens. `faults` are fault rules as
    /// `faultline proxy --fault` takes them ("close:4009,after=5s", "drop,frames=3", ...);
    /// `seed` makes `prob=` and `jitter=` repeat exactly. An existing file at
    /// `recordingTo` is replaced. Throws `FaultlineKitError` for a bad rule or URL, or a
    /// port or file that cannot be opened; nothing is left running then.
    public static func start(upstream: Upstream, faults: [String] = [], recordingTo path: String,
                             seed: UInt64 = 0) throws(FaultlineKitError) -> RecordingProxy {
        var parsed: [FaultRule] = []
        for text in faults {
            do { parsed.append(try FaultRule.parse(text)) } catch { throw FaultlineKitError("fault rule '\(text)': \(error)") }
        }
        let rules = parsed
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<(remote: LoopRemote, address: String, upstream: String), FaultlineKitError>?>(nil)
        let thread = Thread {
            defer { finished.signal() }
            let loop: EventLoop
            do { loop = try EventLoop() } catch {
                outcome.withLock { $0 = .failure(FaultlineKitError("event loop: \(error)")) }
                started.signal()
                return
            }
            let running: (server: ProxyServer, simulator: SimServerRunner?)
            do throws(FaultlineKitError) {
                running = try serve(loop: loop, upstream: upstream, rules: rules, path: path, seed: seed) { address, upstreamText in
                    outcome.withLock { $0 = .success((loop.remote, address, upstreamText)) }
                }
            } catch {
                outcome.withLock { $0 = .failure(error) }
                started.signal()
                loop.close()
                return
            }
            started.signal()
            loop.run()
            running.server.stop()
            running.simulator?.stop()
            // Closing the loop runs the sockets' last callbacks, which still reach the
            // server and the simulator: they must outlive it.
            withExtendedLifetime(running) { loop.close() }
        }
        thread.name = "faultline-proxy"
        thread.start()
        started.wait()
        switch outcome.withLock({ $0 }) {
        case .success(let value)?:
            let port = value.address.split(separator: ":").last.flatMap { Int($0) } ?? 0
            return RecordingProxy(port: port, upstreamURL: value.upstream, recordingPath: path,
                                  remote: value.remote, finished: finished)
        case .failure(let error)?:
            finished.wait()
            throw error
        case nil:
            finished.wait()
            throw FaultlineKitError("the proxy thread ended before it started")
        }
    }

    /// Loop thread: the simulated server (if asked for) and the proxy, started; `ready` is
    /// told the proxy's bound address and the upstream URL.
    private static func serve(loop: EventLoop, upstream: Upstream, rules: [FaultRule], path: String, seed: UInt64,
                              ready: (String, String) -> Void) throws(FaultlineKitError) -> (ProxyServer, SimServerRunner?) {
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
        do {
            ready(try server.start(), upstreamText)
        } catch {
            simulator?.stop()
            throw FaultlineKitError("proxy: \(error)")
        }
        return (server, simulator)
    }

    /// Stops the proxy (open connections are cut and marked as ended by the end of the
    /// capture), closes the capture and returns it. Returns once everything is closed;
    /// calling it again just returns the recording.
    @discardableResult
    public func stop() -> Recording {
        let first = stopped.withLock { wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }
        if first {
            remote.stop()
            finished.wait()
        }
        return Recording(path: recordingPath)
    }

    deinit { stop() }
}
