import Capture
import ControlAPI
import Faults
import Foundation
import JSON
import Synchronization
import Testing
import Transport
import Vocabulary

/// A proxy stand-in: a real `FaultEngine`, a fixed list of "open" connections, and a log of
/// every `faultsChanged` call so tests can see that changes are pushed at once.
final class FakeBackend: ControlBackend {
    let faultEngine = FaultEngine()
    var openConnections: [ConnectionID] = [1, 2]
    var changed: [ConnectionID?] = []
    var counters = ControlMetrics()

    func connectionSummaries() -> [JSONValue] {
        openConnections.map { ["id": .int(Int64($0)), "client": .string("127.0.0.1:5000\($0)"), "state": "open"] }
    }

    func faultsChanged(connection: ConnectionID?) -> Bool {
        changed.append(connection)
        return connection.map(openConnections.contains) ?? true
    }

    func metrics() -> ControlMetrics { counters }
}

/// A value shared between the loop thread and a client thread.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
    func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
    var current: Value { value.withLock { $0 } }
}

/// Starts a `ControlServer` for `backend` on a fresh loop run by this thread, runs `client`
/// (given the bound port) on another thread, and stops the loop when it returns; a guard
/// timer fails the test instead of hanging if the client never finishes.
func withServer(token: String? = nil, backend: FakeBackend, configure: (ControlServer) -> Void = { _ in },
                sourceLocation: SourceLocation = #_sourceLocation,
                client: @escaping @Sendable (Int) -> Void) throws {
    let loop = try EventLoop()
    let server = try ControlServer.start(loop: loop, port: 0, token: token, backend: backend)
    configure(server)
    let remote = loop.remote
    let port = server.port
    let thread = Thread {
        client(port)
        remote.stop()
    }
    thread.start()
    var timedOut = false
    let guardTimer = loop.schedule(after: 20_000_000) {
        timedOut = true
        loop.stop()
    }
    loop.run()
    guardTimer.cancel()
    server.close()
    loop.close()
    #expect(!timedOut, "the client thread did not finish in time", sourceLocation: sourceLocation)
}

extension ControlResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

func request(_ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = []) -> ControlRequest {
    ControlRequest(method: method, target: target, headers: [.init("Host", "127.0.0.1:8474")] + headers.map { .init($0.0, $0.1) },
                   body: body.map { Array($0.utf8) } ?? [])
}
