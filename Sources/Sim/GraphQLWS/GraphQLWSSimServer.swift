import GraphQLWS
import JSON
import Protocols
import Vocabulary
import WebSocket

/// `faultline sim server --protocol graphql-ws`: a graphql-transport-ws server without a
/// schema, after the graphql-ws library's PROTOCOL.md. It acks the first
/// `connection_init` (a second one closes 4429), closes 4408 when none comes within the
/// init timeout, answers pings with pongs, accepts every `subscribe` (before the ack:
/// 4401; an id already active: 4409; a message it cannot read: 4400) and sends each
/// active operation a `next` every event interval until the client completes it.
/// Messages are read by the pack's one decoder (`GraphQLWSProtocol`).
public struct GraphQLWSSimServer: SimConnectionTable {
    public let settings: SimServerSettings
    /// Per connection: acked or not, its active operation ids in the order subscribed.
    var connections: [SimConnectionID: Connection] = [:]
    private var ticks: Int64 = 0

    struct Connection: SimTableConnection {
        var acked = false
        var closing = false
        var operations: [String] = []
    }

    /// The per-connection timer tag of the init timeout.
    public static let initTimeoutTag = 0

    public init(settings: SimServerSettings) {
        self.settings = settings
    }

    /// The graphql-transport-ws subprotocol when offered; none otherwise (a client that
    /// does not offer it gets no subprotocol, as the graphql-ws server's handshake does).
    public func acceptedSubprotocol(offered: [String]) -> String? {
        offered.contains(GraphQLWSProtocol.subprotocol) ? GraphQLWSProtocol.subprotocol : nil
    }

    mutating func opened(_ id: SimConnectionID, path: String, now: SimMicros) -> [SimServerCommand] {
        connections[id] = Connection()
        var commands: [SimServerCommand] = [.log("connection \(id): open \(path)")]
        if let code = settings.refuseCode {
            return commands + close(id, code: code, reason: "connection refused by the simulator (--refuse-code)")
        }
        commands.append(.schedule(.connection(id, tag: Self.initTimeoutTag), at: now + settings.initTimeout))
        if let after = settings.closeAfter { commands.append(.schedule(.closeAfter(id), at: now + after)) }
        return commands
    }

    mutating func closeAfter(_ id: SimConnectionID) -> [SimServerCommand] {
        close(id, code: settings.closeCode, reason: "closed by the simulator (--close-after)")
    }

    mutating func timer(_ tag: Int, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        guard tag == Self.initTimeoutTag, let connection = connections[id], !connection.closing, !connection.acked else { return [] }
        return close(id, code: 4408, reason: "Connection initialisation timeout")
    }

    mutating func received(_ frame: Frame, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        switch frame.opcode {
        case .ping:
            return settings.stallPongs ? [] : [.send(id, Frame(opcode: .pong, payload: frame.payload))]
        case .close:
            // Echo the client's code (RFC 6455 5.5.1).
            let code = closeCode(of: frame.payload).map { CloseCode($0).isSendable ? $0 : 1000 } ?? 1000
            return close(id, code: code, reason: "")
        case .text:
            var decoder = GraphQLWSProtocol()
            guard let message = decoder.decode(frame.payload) else {
                return close(id, code: 4400, reason: "Invalid message received")
            }
            return handle(message, on: id)
        case .binary:
            return close(id, code: 4400, reason: "Invalid message received")
        default:
            return []
        }
    }

    private mutating func handle(_ message: RealtimeEvent, on id: SimConnectionID) -> [SimServerCommand] {
        switch message.name {
        case "connection_init":
            if connections[id]?.acked == true { return close(id, code: 4429, reason: "Too many initialisation requests") }
            connections[id]?.acked = true
            return [.send(id, Self.message(["type": "connection_ack"])), .log("connection \(id): acked")]
        case "ping":
            return settings.stallPongs ? [] : [.send(id, Self.message(["type": "pong"]))]
        case "pong":
            return []
        case "subscribe":
            guard connections[id]?.acked == true else { return close(id, code: 4401, reason: "Unauthorized") }
            guard let operation = message.channel, !operation.isEmpty else { return close(id, code: 4400, reason: "Invalid message received") }
            if connections[id]?.operations.contains(operation) == true {
                return close(id, code: 4409, reason: "Subscriber for \(Self.clipped(operation)) already exists")
            }
            guard (connections[id]?.operations.count ?? 0) < Self.maxOperations else {
                return close(id, code: 4400, reason: "Too many operations")
            }
            connections[id]?.operations.append(operation)
            return [.log("connection \(id): subscribed \(Self.clipped(operation))")]
        case "complete":
            guard let operation = message.channel else { return [] }
            connections[id]?.operations.removeAll { $0 == operation }
            return [.log("connection \(id): completed \(Self.clipped(operation))")]
        default:
            return close(id, code: 4400, reason: "Invalid message received")
        }
    }

    /// Operations one connection may hold: a bound on what a client can make the server keep.
    static let maxOperations = 256

    /// An operation id for a log line or close reason: at most 32 characters (a close
    /// reason has room for 123 bytes; the log line is escaped by the runner's sink).
    static func clipped(_ operation: String) -> String {
        operation.count > 32 ? String(operation.prefix(32)) + "..." : operation
    }

    private mutating func close(_ id: SimConnectionID, code: UInt16, reason: String) -> [SimServerCommand] {
        connections[id]?.closing = true
        return [.close(id, code: code, reason: reason), .log("connection \(id): closing with \(code) (\(reason))")]
    }

    /// One `next` for every active operation: `{"data": {EVENT: {"n": N, "t": T}}}`.
    mutating func tick(now: SimMicros) -> [SimServerCommand] {
        ticks += 1
        var commands: [SimServerCommand] = []
        for id in connections.keys.sorted() {
            guard let connection = connections[id], connection.acked, !connection.closing else { continue }
            for operation in connection.operations {
                let tick: JSONValue = ["n": .int(ticks), "t": .int(now)]
                let result: JSONValue = ["data": .object(JSONObject([(key: settings.eventName, value: tick)]))]
                commands.append(.send(id, Self.message(["id": .string(operation), "type": "next", "payload": result])))
            }
        }
        return commands + settings.nextTick(after: now)
    }

    static func message(_ value: JSONValue) -> Frame {
        .text(JSONWriter.serialize(value))
    }
}
