import Protocols
import SocketIO
import Vocabulary
import WebSocket

/// `faultline sim server --protocol socketio`: a Socket.IO v5 server over engine.io v4's
/// websocket transport, without sockets, faithful to what python-socketio's server sends:
/// the open packet at once (`0{"sid":..,"pingInterval":..,"pingTimeout":..}`), a ping `2`
/// every ping interval, the connection closed when no pong `3` came within the ping
/// timeout, each namespace connect `40` answered `40{"sid":..}`, an event asking for an
/// ack (`42ID[..]`) answered `43ID[]`, and the periodic server event on every connected
/// namespace. Client messages are read by the protocol table's Socket.IO entry, the one
/// decoder of the protocol. `closeAfter`/`closeCode` and `refuseCode` act as for Bird (a
/// close frame: engine.io has no close codes of its own), `omitSocketID` leaves the open
/// packet without its `sid`; `stallPongs` stops the pings
/// (the server's side of the keep-alive), so clients' ping deadlines fire.
public struct SocketIOServer: SimConnectionTable {
    /// The per-connection timers, as `SimServerTimer.connection` tags.
    enum Timer: Int {
        case ping = 0, pongDeadline
    }

    struct Connection: SimTableConnection {
        var sid: String
        var namespaces: [String] = []
        var awaitingPong = false
        var closing = false
    }

    public let settings: SimServerSettings
    var connections: [SimConnectionID: Connection] = [:]
    private var random: SeededGenerator
    private var ticks: Int64 = 0

    public init(settings: SimServerSettings, seed: UInt64) {
        self.settings = settings
        random = SeededGenerator(seed: seed)
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    mutating func opened(_ id: SimConnectionID, path: String, now: SimMicros) -> [SimServerCommand] {
        if let code = settings.refuseCode {
            return [.close(id, code: code, reason: "refused by the simulator (--refuse)"),
                    .log("connection \(id): refused with \(code)")]
        }
        let sid = newSID()
        connections[id] = Connection(sid: sid)
        var commands: [SimServerCommand] = [.log("connection \(id): open, sid \(sid)"), .send(id, .text(openPacket(sid: sid)))]
        commands.append(.schedule(.connection(id, tag: Timer.ping.rawValue), at: now + settings.pingInterval))
        if let after = settings.closeAfter { commands.append(.schedule(.closeAfter(id), at: now + after)) }
        return commands
    }

    mutating func closeAfter(_ id: SimConnectionID) -> [SimServerCommand] {
        close(id, code: settings.closeCode, why: "--close-after")
    }

    mutating func timer(_ tag: Int, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        switch Timer(rawValue: tag) {
        case .ping?: return ping(id, now: now)
        case .pongDeadline?:
            guard connections[id]?.awaitingPong == true else { return [] }
            return close(id, code: 1000, why: "no pong within the ping timeout")
        case nil: return []
        }
    }

    /// engine.io's open packet for a new connection; its times in milliseconds.
    func openPacket(sid: String) -> String {
        let id = settings.omitSocketID ? "" : #""sid":"\#(sid)","#
        return #"0{\#(id)"upgrades":[],"pingInterval":\#(settings.pingInterval / 1000),"pingTimeout":\#(settings.pingTimeout / 1000),"maxPayload":1000000}"#
    }

    mutating func received(_ frame: Frame, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        guard var connection = connections[id], !connection.closing else { return [] }
        switch frame.opcode {
        case .ping:
            return [.send(id, Frame(opcode: .pong, payload: frame.payload))]
        case .close:
            return close(id, code: 1000, why: "the client closed")
        case .text:
            break
        default:
            return []
        }
        let entry = SocketIOProtocol()
        guard let event = entry.decode(frame.payload) else {
            return close(id, code: 1003, why: "a message that is no engine.io packet")
        }
        var commands: [SimServerCommand] = []
        switch event.kind {
        case .pong:
            connection.awaitingPong = false
        case .subscribe:
            let namespace = event.targetChannel ?? "/"
            if !connection.namespaces.contains(namespace) { connection.namespaces.append(namespace) }
            commands.append(.send(id, .text(Self.packet("0", namespace: namespace, #"{"sid":"\#(newSID())"}"#))))
            commands.append(.log("connection \(id): connected to namespace \(namespace)"))
        case .unsubscribe:
            connection.namespaces.removeAll { $0 == (event.targetChannel ?? "/") }
        case .clientEvent:
            if let ack = event.ref {
                commands.append(.send(id, .text(Self.packet("3", namespace: event.channel ?? "/", ack + "[]"))))
            }
        case .other where event.name == "close":
            connections[id] = connection
            return close(id, code: 1000, why: "the client's engine.io close")
        default:
            break
        }
        connections[id] = connection
        return commands
    }

    private mutating func ping(_ id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        guard var connection = connections[id], !connection.closing else { return [] }
        let next: SimServerCommand = .schedule(.connection(id, tag: Timer.ping.rawValue), at: now + settings.pingInterval)
        if settings.stallPongs { return [next] }
        connection.awaitingPong = true
        connections[id] = connection
        return [.send(id, .text("2")), next,
                .schedule(.connection(id, tag: Timer.pongDeadline.rawValue), at: now + settings.pingTimeout)]
    }

    private mutating func close(_ id: SimConnectionID, code: UInt16, why: String) -> [SimServerCommand] {
        guard isLive(id) else { return [] }
        connections[id]?.closing = true
        return [.close(id, code: code, reason: "closed by the simulator (\(why))"), .log("connection \(id): closing with \(code) (\(why))")]
    }

    mutating func tick(now: SimMicros) -> [SimServerCommand] {
        ticks += 1
        var commands: [SimServerCommand] = []
        for id in connections.keys.sorted() {
            guard let connection = connections[id], !connection.closing else { continue }
            for namespace in connection.namespaces {
                let event = #"["\#(settings.eventName)",{"n":\#(ticks),"t":\#(now)}]"#
                commands.append(.send(id, .text(Self.packet("2", namespace: namespace, event))))
            }
        }
        return commands + settings.nextTick(after: now)
    }

    /// A socket.io packet in an engine.io message: `4`, its type, `/ns,` unless `/`, its data.
    static func packet(_ type: String, namespace: String, _ data: String) -> String {
        "4" + type + (namespace == "/" ? "" : namespace + ",") + data
    }

    /// A 20-character id of URL-safe characters, as engine.io's.
    private mutating func newSID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }
}
