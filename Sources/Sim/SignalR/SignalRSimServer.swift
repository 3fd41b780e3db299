import JSON
import Protocols
import SignalR
import Vocabulary
import WebSocket

/// `faultline sim server --protocol signalr`: an ASP.NET Core SignalR hub speaking the JSON
/// hub protocol over WebSocket, without sockets. It answers the client's handshake request
/// (`{}`, or `{"error":...}` for another hub protocol or with `refuseCode`), sends a keep-alive
/// ping (type 6) every `keepAliveInterval` as `HubOptions.KeepAliveInterval` does (none with
/// `stallPongs`), invokes `eventName` on every connected client each `eventInterval`,
/// completes every invocation that has an id with its first argument as the result, and
/// with `closeAfter` sends a close message (type 7: `allowReconnect: true`, with
/// `closeNoReconnect` `allowReconnect: false`, or with `closeFinal` an `error` and no
/// `allowReconnect`) and closes the WebSocket with `closeCode`. Clients connect to any path with negotiation skipped (no
/// `POST /negotiate` is served).
public struct SignalRSimServer: SimProtocolServer {
    public let settings: SimServerSettings
    /// Connections whose handshake was answered with success.
    public private(set) var connected: Set<SimConnectionID> = []
    private var open: Set<SimConnectionID> = []
    private var ticks: Int64 = 0

    /// The per-connection timer tag of the keep-alive ping.
    static let keepAliveTag = 1

    public init(settings: SimServerSettings, seed: UInt64) {
        self.settings = settings
    }

    public mutating func handle(_ event: SimServerEvent, now: SimMicros) -> [SimServerCommand] {
        switch event {
        case .opened(let id, _):
            open.insert(id)
            var commands: [SimServerCommand] = [.log("connection \(id): open")]
            if let after = settings.closeAfter { commands.append(.schedule(.closeAfter(id), at: now + after)) }
            return commands
        case .received(let id, let frame):
            guard open.contains(id), frame.opcode == .text else { return [] }
            return received(frame.payload, from: id, now: now)
        case .closed(let id):
            open.remove(id)
            connected.remove(id)
            return [.log("connection \(id): closed")]
        case .timer(.tick):
            return tick(now: now)
        case .timer(.closeAfter(let id)):
            guard open.contains(id) else { return [] }
            let record = settings.closeFinal ? #"{"type":7,"error":"closed by the simulator (--close-after)"}"#
                : settings.closeNoReconnect ? #"{"type":7,"allowReconnect":false}"# : #"{"type":7,"allowReconnect":true}"#
            return close(id, code: settings.closeCode, record: record, why: "closing with \(settings.closeCode) (--close-after)")
        case .timer(.connection(let id, let tag)):
            guard tag == Self.keepAliveTag, connected.contains(id) else { return [] }
            return [.send(id, Self.text(#"{"type":6}"#)), .schedule(.connection(id, tag: tag), at: now + settings.keepAliveInterval)]
        }
    }

    /// A client message: the handshake request first, then hub messages.
    private mutating func received(_ payload: [UInt8], from id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        guard connected.contains(id) else { return handshake(payload, from: id, now: now) }
        var decoder = SignalRProtocol()
        guard let event = decoder.decode(payload) else { return [] }
        switch event.name {
        case "close":
            return close(id, code: 1000, record: nil, why: "closed by the client's close message")
        case "ping", "completion", "stream_item", "cancel_invocation":
            return []
        default:
            // An invocation (type 1) with an id wants its completion; one without is fire-and-forget.
            guard let invocationID = event.ref else { return [] }
            let result = event.dataMember("arguments").flatMap { $0.arrayValue?.first } ?? .null
            let completion: JSONValue = ["type": .int(3), "invocationId": .string(invocationID), "result": result]
            return [.send(id, Self.text(JSONWriter.serialize(completion)))]
        }
    }

    /// The answer to the handshake request: `{}` and the first keep-alive, or an error and
    /// the close (another protocol than json, `refuseCode`, no handshake request at all).
    private mutating func handshake(_ payload: [UInt8], from id: SimConnectionID, now: SimMicros) -> [SimServerCommand] {
        guard let request = SignalRProtocol.handshakeRequest(in: payload) else {
            return close(id, code: 1002, record: #"{"error":"Handshake was canceled."}"#, why: "no handshake request")
        }
        if let code = settings.refuseCode {
            return close(id, code: code, record: #"{"error":"refused by the simulator (--refuse-code)"}"#, why: "refused with \(code)")
        }
        guard request.protocol == "json", request.version == 1 else {
            let answer: JSONValue = ["error": .string("Requested protocol '\(request.protocol)' is not available.")]
            return close(id, code: 1000, record: JSONWriter.serialize(answer), why: "refused hub protocol \(request.protocol)")
        }
        connected.insert(id)
        var commands: [SimServerCommand] = [.send(id, Self.text("{}")), .log("connection \(id): handshake (json 1)")]
        if !settings.stallPongs {
            commands.append(.schedule(.connection(id, tag: Self.keepAliveTag), at: now + settings.keepAliveInterval))
        }
        return commands
    }

    /// The periodic server invocation on every connected client.
    private mutating func tick(now: SimMicros) -> [SimServerCommand] {
        ticks += 1
        let invocation: JSONValue = ["type": .int(1), "target": .string(settings.eventName), "arguments": .array([.int(ticks)])]
        let text = Self.text(JSONWriter.serialize(invocation))
        return connected.sorted().map { .send($0, text) } + settings.nextTick(after: now)
    }

    /// Sends `record` (when given) and closes the WebSocket with `code`.
    private mutating func close(_ id: SimConnectionID, code: UInt16, record: String?, why: String) -> [SimServerCommand] {
        open.remove(id)
        connected.remove(id)
        let message: [SimServerCommand] = record.map { [.send(id, Self.text($0))] } ?? []
        return message + [.close(id, code: code, reason: ""), .log("connection \(id): \(why)")]
    }

    /// One record of the JSON hub protocol: its JSON text and the record separator.
    static func text(_ json: String) -> Frame {
        Frame.text(json + "\u{1e}")
    }
}
