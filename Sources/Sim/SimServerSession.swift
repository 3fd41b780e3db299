import Bird
import JSON
import WebSocket

/// A member of a presence channel: `user_id` and `user_info` from the signed `channel_data`.
public struct SimPresenceMember: Sendable, Hashable {
    public var userID: String
    public var userInfo: JSONValue
}

/// One connection's server side, without sockets: decodes the client's events, checks
/// signatures, and says what should happen. Membership across connections (who else is on a
/// channel) is the `SimServer` hub's; the session reports joins, leaves and client events as
/// `Action`s for it.
public struct SimServerSession: Sendable {
    public enum Action: Sendable, Hashable {
        case send(BirdMessage)
        case sendFrame(Frame)
        case close(code: UInt16, reason: String)
        /// Subscription accepted; the hub answers with `subscription_succeeded` (it knows the members).
        case join(channel: String, member: SimPresenceMember?)
        case leave(channel: String, member: SimPresenceMember?)
        /// A client event to relay to the channel's other subscribers.
        case relay(BirdMessage)
        case log(String)
    }

    public let id: SimConnectionID
    public let socketID: String
    /// Channels this connection has joined, with its presence identity where there is one.
    public private(set) var channels: [String: SimPresenceMember?] = [:]
    public private(set) var signedInUser: String?
    public private(set) var isClosing = false
    private let settings: SimServerSettings

    public init(id: SimConnectionID, socketID: String, settings: SimServerSettings) {
        self.id = id
        self.socketID = socketID
        self.settings = settings
    }

    /// The socket is up: refuse it, reject an unknown app key (4001, as Pusher does), or
    /// send the handshake.
    public mutating func opened(path: String) -> [Action] {
        if let code = settings.refuseCode {
            return fail(code: code, message: "connection refused by the simulator (--refuse-code)")
        }
        guard SimServerSession.appKey(in: path) == settings.appKey else {
            return fail(code: 4001, message: "unknown app key in \(path)")
        }
        var data = JSONObject()
        if !settings.omitSocketID { data["socket_id"] = .string(socketID) }
        data["activity_timeout"] = .int(Int64(settings.activityTimeout))
        return [.send(BirdMessage(event: settings.event("connection_established"), data: BirdMessage.encoded(.object(data))))]
    }

    /// The app key in `/app/KEY?query`, nil if the path has another shape.
    public static func appKey(in path: String) -> String? {
        let withoutQuery = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = withoutQuery.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == "app" else { return nil }
        return String(parts[1])
    }

    /// The server is closing this connection on its own (`closeAfter`): send it nothing more.
    public mutating func beginClose() { isClosing = true }

    public mutating func received(_ frame: Frame) -> [Action] {
        guard !isClosing else { return [] }
        switch frame.opcode {
        case .ping:
            return settings.stallPongs ? [] : [.sendFrame(Frame(opcode: .pong, payload: frame.payload))]
        case .close:
            // Echo the client's code (RFC 6455 5.5.1); the hub forgets this connection.
            isClosing = true
            let code = closeCode(of: frame.payload).map { CloseCode($0).isSendable ? $0 : 1000 } ?? 1000
            let left = channels.keys.sorted().map { Action.leave(channel: $0, member: channels[$0] ?? nil) }
            channels = [:]
            return left + [.close(code: code, reason: "")]
        case .text:
            guard let message = BirdMessage.parse(frame) else {
                return [.send(error("malformed event: not a JSON object with an \"event\" name", code: nil))]
            }
            return handle(message)
        default:
            return []
        }
    }

    private mutating func handle(_ message: BirdMessage) -> [Action] {
        switch message.event {
        case settings.event("ping"):
            return settings.stallPongs ? [] : [.send(BirdMessage(event: settings.event("pong")))]
        case settings.event("pong"):
            return []
        case settings.event("subscribe"):
            return subscribe(message.decodedData)
        case settings.event("unsubscribe"):
            guard let channel = message.decodedData["channel"]?.stringValue, let member = channels[channel] else { return [] }
            channels[channel] = nil
            return [.leave(channel: channel, member: member)]
        case settings.event("signin"):
            return signin(message.decodedData)
        case let name where name.hasPrefix("client-"):
            return clientEvent(message)
        default:
            return [.log("connection \(id): ignored event \(message.event)")]
        }
    }

    private mutating func subscribe(_ data: JSONValue) -> [Action] {
        guard let channel = data["channel"]?.stringValue, !channel.isEmpty else {
            return [.send(error("subscribe without a channel name", code: nil))]
        }
        let kind = BirdChannelKind(channel: channel)
        var member: SimPresenceMember?
        if kind.needsAuth {
            let channelData = kind == .presence ? data["channel_data"]?.stringValue : nil
            let expected = BirdAuth.channelAuth(appKey: settings.appKey, secret: settings.appSecret, socketID: socketID,
                                               channel: channel, channelData: channelData)
            guard let auth = data["auth"]?.stringValue, auth == expected else {
                return [.send(subscriptionError(channel, "invalid signature for socket \(socketID)")),
                        .log("connection \(id): refused \(channel): bad auth")]
            }
            if kind == .presence {
                guard let channelData, let parsed = try? JSONParser.parse(channelData),
                      let userID = parsed["user_id"]?.stringValue ?? parsed["user_id"]?.intValue.map({ String($0) }) else {
                    return [.send(subscriptionError(channel, "presence channel_data without user_id"))]
                }
                member = SimPresenceMember(userID: userID, userInfo: parsed["user_info"] ?? .null)
            }
        }
        channels[channel] = .some(member)
        return [.join(channel: channel, member: member)]
    }

    private mutating func signin(_ data: JSONValue) -> [Action] {
        guard let userData = data["user_data"]?.stringValue,
              let user = (try? JSONParser.parse(userData))?["id"]?.stringValue else {
            return [.send(error("signin without user_data holding an id", code: nil))]
        }
        let expected = BirdAuth.signinAuth(appKey: settings.appKey, secret: settings.appSecret, socketID: socketID, userData: userData)
        guard data["auth"]?.stringValue == expected else {
            return [.send(error("invalid signin signature for socket \(socketID)", code: 4009)),
                    .log("connection \(id): refused signin of \(user): bad auth")]
        }
        signedInUser = user
        return [.send(BirdMessage(event: settings.event("signin_success"),
                                 data: BirdMessage.encoded(["user_data": .string(userData)]))),
                .log("connection \(id): signed in as \(user)")]
    }

    private func clientEvent(_ message: BirdMessage) -> [Action] {
        guard let channel = message.channel, BirdChannelKind(channel: channel).needsAuth else {
            return [.send(error("client event rejected: only private and presence channels carry client events", code: nil))]
        }
        guard let membership = channels[channel] else {
            return [.send(error("client event rejected: not subscribed to \(channel)", code: nil))]
        }
        var relayed = message
        relayed.userID = membership?.userID
        return [.relay(relayed)]
    }

    private mutating func fail(code: UInt16, message: String) -> [Action] {
        isClosing = true
        return [.send(error(message, code: code)), .close(code: code, reason: message),
                .log("connection \(id): refused with \(code): \(message)")]
    }

    private func error(_ message: String, code: UInt16?) -> BirdMessage {
        BirdMessage(event: settings.event("error"),
                   data: ["message": .string(message), "code": code.map { .int(Int64($0)) } ?? .null])
    }

    private func subscriptionError(_ channel: String, _ text: String) -> BirdMessage {
        BirdMessage(event: settings.event("subscription_error"), channel: channel,
                   data: ["type": "AuthError", "error": .string(text), "status": 403])
    }
}

/// The code of a close body without judging it (nil for an empty body): the simulator
/// answers any close, even one a strict peer would refuse.
func closeCode(of payload: [UInt8]) -> UInt16? {
    guard payload.count >= 2 else { return nil }
    return UInt16(payload[0]) << 8 | UInt16(payload[1])
}
