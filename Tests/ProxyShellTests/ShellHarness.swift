import Foundation
import ProxyShell
import Sim
import Synchronization
import TestSupport
import Transport
import Vocabulary
import WebSocket

/// A `ProxyServer` in front of the simulated Bird server, both on an event loop of their own
/// thread, as a client test suite runs it: the test thread talks to the proxy through
/// sockets and reads its state with `onLoop`.
///
/// `@unchecked Sendable`: `server` is set once on the loop thread before `init` returns
/// (the semaphore orders it) and then touched only in jobs run on the loop thread.
final class ShellHarness: @unchecked Sendable {
    private var server: ProxyServer?
    private(set) var port = 0
    private(set) var upstreamPort = 0
    private var remote: LoopRemote?
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    struct SetupError: Error, CustomStringConvertible { var description: String }

    /// Starts the simulated upstream and the proxy; `configure` adjusts the proxy's settings
    /// (its upstream is the simulator).
    init(record path: String? = nil, configure: @escaping @Sendable (inout ProxySettings, Int) -> Void = { _, _ in }) throws {
        let started = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let thread = Thread { [self] in
            defer { finished.signal() }
            guard let loop = try? EventLoop() else {
                failure.withLock { $0 = "no event loop" }
                started.signal()
                return
            }
            let simulator = SimServerRunner(loop: loop, settings: SimServerSettings(), seed: 1)
            do {
                let simAddress = try simulator.listen(HostPort(host: "127.0.0.1", port: 0))
                upstreamPort = Int(simAddress.split(separator: ":").last ?? "") ?? 0
                var settings = ProxySettings(listen: HostPort(host: "127.0.0.1", port: 0),
                                             upstream: UpstreamURL(host: "127.0.0.1", port: upstreamPort))
                settings.recordPath = path
                configure(&settings, upstreamPort)
                let server = ProxyServer(loop: loop, settings: settings)
                let address = try server.start()
                port = Int(address.split(separator: ":").last ?? "") ?? 0
                self.server = server
                remote = loop.remote
            } catch {
                failure.withLock { $0 = "\(error)" }
                started.signal()
                loop.close()
                return
            }
            started.signal()
            loop.run()
            server?.stop()
            simulator.stop()
            // The sockets' last callbacks (run by close) still reach the simulator.
            withExtendedLifetime(simulator) { loop.close() }
        }
        thread.start()
        started.wait()
        if let message = failure.withLock({ $0 }) {
            finished.wait()
            throw SetupError(description: message)
        }
    }

    /// Runs `body` with the server on the loop thread and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (ProxyServer) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        remote?.execute { [self] _ in
            let value = body(server!)
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Polls `condition` on the loop thread until it holds or `timeout` seconds pass (an
    /// upper bound only: it returns as soon as the condition holds).
    func wait(timeout: Double = 30, until condition: @escaping @Sendable (ProxyServer) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if onLoop(condition) { return true }
            usleep(2_000)
        }
        return false
    }

    /// Stops the proxy (closing its capture) and the simulator, and waits for the thread.
    func stop() {
        let first = stopped.withLock { was in
            defer { was = true }
            return !was
        }
        guard first else { return }
        remote?.stop()
        finished.wait()
    }

    deinit { stop() }
}

/// The client side of a WebSocket exchange over a `RawSocket`: an upgrade request, masked
/// frames, and frames read back through the library's own decoder.
struct RawWebSocket {
    let socket: RawSocket
    private var decoder = FrameDecoder()

    init(port: Int, path: String = "/app/sim-key?protocol=7", host: String = "127.0.0.1") throws {
        socket = try RawSocket(port: port)
        socket.send(Array(("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
    }

    /// The upgrade answer's status line.
    func responseHead() -> String {
        String(decoding: socket.readHead(), as: UTF8.self)
    }

    /// The next frame from the proxy, or nil at EOF or the socket's timeout.
    mutating func nextFrame() throws -> Frame? {
        while true {
            if let frame = try decoder.next() { return frame }
            let bytes = socket.readSome()
            if bytes.isEmpty { return nil }
            decoder.append(bytes)
        }
    }

    /// Sends a masked frame (client frames must be masked, RFC 6455 5.3).
    func send(opcode: UInt8, _ payload: [UInt8]) {
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        precondition(payload.count < 126)
        var bytes: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        socket.send(bytes)
    }
}
