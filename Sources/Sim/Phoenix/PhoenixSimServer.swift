import Phoenix
import Protocols
import Vocabulary
import WebSocket

/// `faultline sim server --protocol phoenix`: a Phoenix Channels server without sockets,
/// faithful to what phoenix.js and other clients rely on. The serializer is the one the
/// socket URL's `vsn=` names (`1.0.0`: V1 objects, else V2 arrays).
///
/// - a `heartbeat` on topic `phoenix` is answered by a `phx_reply` with its ref (none with
///   `stallPongs`, so clients' heartbeat timeouts fire);
/// - a `phx_join` joins the topic and is answered `ok` with the join's ref as `join_ref`
///   and `ref`; a `phx_leave` is answered `ok`, then the channel's `phx_close`;
/// - any other push with a ref is answered `ok` and relayed to the topic's other members;
/// - every `eventInterval` each joined topic gets the server event `eventName`;
/// - `closeAfter`/`closeCode` close each connection on a schedule, `refuseCode` closes it at
///   once (Phoenix has no handshake message to refuse in).
public struct PhoenixSimServer: SimConnectionTable {
    public let settings: SimServerSettings
    /// The most topics one connection may join; a join past it is answered `error`.
    public static let topicLimit = 256

    struct Connection: SimTableConnection {
        var serializer: PhoenixMessage.Serializer
        /// Joined topic -> its join ref.
        var topics: [String: String?] = [:]
        var closing = false
    }

    var connections: [SimConnectionID: Connection] = [:]
    private var ticks: Int64 = 0

    public init(settings: SimServerSettings) {
        self.settings = settings
    }

    mutating func opened(_ id: SimConnectionID, path: String, now: SimMicros) -> [SimServerCommand] {
        let serializer = Self.serializer(of: path)
        connections[id] = Connection(serializer: serializer)
        var commands: [SimServerCommand] = [.log("connection \(id): open, serializer \(serializer.rawValue)")]
        if let code = settings.refuseCode {
            connections[id]?.closing = true
            return commands + [.close(id, code: code, reason: "refused by the simulator"),
                               .log("connection \(id): refused with \(code)")]
        }
        if let after = settings.closeAfter { commands.append(.schedule(.closeAfter(id), at: now + after)) }
        return commands
    }

    mutating func received(_ frame: Frame, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        switch frame.opcode {
        case .ping: return settings.stallPongs ? [] : [.send(id, Frame(opcode: .pong, payload: frame.payload))]
        case .text: return received(frame.payload, on: id)
        case .close:
            // Echo the client's code (RFC 6455 5.5.1), as the Bird machine does.
            connections[id]?.closing = true
            let code = closeCode(of: frame.payload).map { CloseCode($0).isSendable ? $0 : 1000 } ?? 1000
            return [.close(id, code: code, reason: "")]
        default: return []
        }
    }

    mutating func closeAfter(_ id: SimConnectionID) -> [SimServerCommand] {
        connections[id]?.closing = true
        return [.close(id, code: settings.closeCode, reason: "closed by the simulator (--close-after)"),
                .log("connection \(id): closing with \(settings.closeCode) (--close-after)")]
    }

    /// The serializer the socket URL's `vsn=` names; V2 when it names none.
    static func serializer(of path: String) -> PhoenixMessage.Serializer {
        let evidence = UpgradeEvidence(target: path)
        return evidence.query.contains { $0.name == "vsn" && $0.value.hasPrefix("1.") } ? .v1 : .v2
    }

    private mutating func received(_ payload: [UInt8], on id: SimConnectionID) -> [SimServerCommand] {
        guard let connection = connections[id], let message = PhoenixMessage.parse(payload) else { return [] }
        let serializer = connection.serializer
        func reply(_ status: String, _ response: String = "{}") -> SimServerCommand {
            let reply = PhoenixMessage(joinRef: message.joinRef ?? (message.event == "phx_join" ? message.ref : nil),
                                       ref: message.ref, topic: message.topic, event: "phx_reply",
                                       payload: Array("{\"status\":\"\(status)\",\"response\":\(response)}".utf8)[...],
                                       serializer: serializer)
            return .send(id, .text(String(decoding: reply.encoded(), as: UTF8.self)))
        }
        if message.topic == PhoenixProtocol.socketTopic, message.event == "heartbeat" {
            return settings.stallPongs || message.ref == nil ? [] : [reply("ok")]
        }
        switch message.event {
        case "phx_join":
            guard connection.topics[message.topic] != nil || connection.topics.count < Self.topicLimit else {
                return [reply("error", "{\"reason\":\"too many topics\"}"), .log("connection \(id): join refused, too many topics")]
            }
            connections[id]?.topics[message.topic] = .some(message.joinRef ?? message.ref)
            return [reply("ok"), .log("connection \(id): joined \(Self.printable(message.topic))")]
        case "phx_leave":
            connections[id]?.topics.removeValue(forKey: message.topic)
            let close = PhoenixMessage(joinRef: message.joinRef, ref: message.ref, topic: message.topic, event: "phx_close",
                                       payload: Array("{}".utf8)[...], serializer: serializer)
            return [reply("ok"), .send(id, .text(String(decoding: close.encoded(), as: UTF8.self))),
                    .log("connection \(id): left \(Self.printable(message.topic))")]
        default:
            guard message.ref != nil else { return [] }
            guard connection.topics[message.topic] != nil else {
                return [reply("error", "{\"reason\":\"unmatched topic\"}")]
            }
            var commands = [reply("ok")]
            for (other, peer) in connections.sorted(by: { $0.key < $1.key }) where other != id && !peer.closing {
                guard let joinRef = peer.topics[message.topic] else { continue }
                let relayed = PhoenixMessage(joinRef: joinRef, ref: nil, topic: message.topic, event: message.event,
                                             payload: message.payload ?? Array("{}".utf8)[...], serializer: peer.serializer)
                commands.append(.send(other, .text(String(decoding: relayed.encoded(), as: UTF8.self))))
            }
            return commands
        }
    }

    mutating func tick(now: SimMicros) -> [SimServerCommand] {
        ticks += 1
        var commands: [SimServerCommand] = []
        for (id, connection) in connections.sorted(by: { $0.key < $1.key }) where !connection.closing {
            for (topic, joinRef) in connection.topics.sorted(by: { $0.key < $1.key }) {
                let event = PhoenixMessage(joinRef: joinRef, ref: nil, topic: topic, event: settings.eventName,
                                           payload: Array("{\"n\":\(ticks),\"t\":\(now)}".utf8)[...],
                                           serializer: connection.serializer)
                commands.append(.send(id, .text(String(decoding: event.encoded(), as: UTF8.self))))
            }
        }
        return commands + settings.nextTick(after: now)
    }

    /// A topic for the operator's log line, escaped for the terminal.
    static func printable(_ topic: String) -> String { DisplayUnsafe.escaped(topic) }
}
