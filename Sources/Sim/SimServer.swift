import Bird
import JSON
import Vocabulary
import WebSocket

/// The simulator server's whole state, without sockets: every connection's session and the
/// channel membership they share, so a client event reaches the channel's other subscribers
/// and presence members see each other. One instance per `faultline sim server`; the runner
/// feeds it events from every connection and carries out the commands.
public struct SimServer: Sendable {
    public let settings: SimServerSettings
    public private(set) var sessions: [SimConnectionID: SimServerSession] = [:]
    /// Channel name -> subscribed connections, in the order they joined.
    public private(set) var members: [String: [SimConnectionID]] = [:]
    private var random: SeededGenerator
    private var ticks: Int64 = 0

    public init(settings: SimServerSettings, seed: UInt64) {
        self.settings = settings
        self.random = SeededGenerator(seed: seed)
    }

    public mutating func handle(_ event: SimServerEvent, now: SimMicros) -> [SimServerCommand] {
        switch event {
        case .opened(let id, let path):
            let socketID = "\(UInt32.random(in: 1000...99_999, using: &random)).\(UInt32.random(in: 1000...99_999_999, using: &random))"
            var session = SimServerSession(id: id, socketID: socketID, settings: settings)
            let actions = session.opened(path: path)
            sessions[id] = session
            var commands: [SimServerCommand] = [.log("connection \(id): open, socket \(socketID)")]
            if let after = settings.closeAfter, !session.isClosing {
                commands.append(.schedule(.closeAfter(id), at: now + after))
            }
            return commands + perform(actions, for: id)
        case .received(let id, let frame):
            guard var session = sessions[id] else { return [] }
            let actions = session.received(frame)
            sessions[id] = session
            return perform(actions, for: id)
        case .closed(let id):
            guard let session = sessions.removeValue(forKey: id) else { return [] }
            var commands: [SimServerCommand] = [.log("connection \(id): closed")]
            for channel in session.channels.keys.sorted() {
                commands += leave(channel, id: id, member: session.channels[channel] ?? nil)
            }
            return commands
        case .timer(.tick):
            return tick(now: now)
        case .timer(.closeAfter(let id)):
            guard let session = sessions[id], !session.isClosing else { return [] }
            sessions[id]?.beginClose()
            return [.close(id, code: settings.closeCode, reason: "closed by the simulator (--close-after)"),
                    .log("connection \(id): closing with \(settings.closeCode) (--close-after)")]
        case .timer(.connection):
            return []  // Bird schedules no per-connection timers of this kind
        }
    }

    /// Connections subscribed to `channel`.
    public func subscribers(of channel: String) -> [SimConnectionID] { members[channel] ?? [] }

    private mutating func perform(_ actions: [SimServerSession.Action], for id: SimConnectionID) -> [SimServerCommand] {
        var commands: [SimServerCommand] = []
        for action in actions {
            switch action {
            case .send(let message): commands.append(.send(id, message.frame))
            case .sendFrame(let frame): commands.append(.send(id, frame))
            case .close(let code, let reason):
                commands.append(.close(id, code: code, reason: reason))
            case .log(let line): commands.append(.log(line))
            case .join(let channel, let member): commands += join(channel, id: id, member: member)
            case .leave(let channel, let member): commands += leave(channel, id: id, member: member)
            case .relay(let message):
                for other in subscribers(of: message.channel ?? "") where other != id {
                    commands.append(.send(other, message.frame))
                }
            }
        }
        return commands
    }

    private mutating func join(_ channel: String, id: SimConnectionID, member: SimPresenceMember?) -> [SimServerCommand] {
        var commands: [SimServerCommand] = []
        if !(members[channel] ?? []).contains(id) { members[channel, default: []].append(id) }
        var data: JSONValue = .object(JSONObject())
        if let member {
            data = ["presence": presence(of: channel)]
            let added = BirdMessage(event: settings.internalEvent("member_added"), channel: channel,
                                   data: BirdMessage.encoded(["user_id": .string(member.userID), "user_info": member.userInfo]))
            if !hasUser(member.userID, on: channel, besides: id) {
                for other in subscribers(of: channel) where other != id { commands.append(.send(other, added.frame)) }
            }
        }
        let succeeded = BirdMessage(event: settings.internalEvent("subscription_succeeded"), channel: channel,
                                   data: BirdMessage.encoded(data))
        return [.send(id, succeeded.frame), .log("connection \(id): subscribed \(channel)")] + commands
    }

    private mutating func leave(_ channel: String, id: SimConnectionID, member: SimPresenceMember?) -> [SimServerCommand] {
        members[channel]?.removeAll { $0 == id }
        if members[channel]?.isEmpty == true { members[channel] = nil }
        var commands: [SimServerCommand] = [.log("connection \(id): left \(channel)")]
        if let member, !hasUser(member.userID, on: channel, besides: id) {
            let removed = BirdMessage(event: settings.internalEvent("member_removed"), channel: channel,
                                     data: BirdMessage.encoded(["user_id": .string(member.userID)]))
            for other in subscribers(of: channel) { commands.append(.send(other, removed.frame)) }
        }
        return commands
    }

    /// Whether a connection other than `id` holds `userID` on `channel`: presence counts
    /// users, not connections, so a second tab of one user adds no member.
    private func hasUser(_ userID: String, on channel: String, besides id: SimConnectionID) -> Bool {
        subscribers(of: channel).contains { other in
            other != id && (sessions[other]?.channels[channel] ?? nil)?.userID == userID
        }
    }

    /// `{"ids":[...],"hash":{id: info},"count":N}` of a presence channel's current members.
    private func presence(of channel: String) -> JSONValue {
        var ids: [JSONValue] = []
        var hash = JSONObject()
        for id in subscribers(of: channel) {
            guard let member = sessions[id]?.channels[channel] ?? nil, hash[member.userID] == nil else { continue }
            ids.append(.string(member.userID))
            hash[member.userID] = member.userInfo
        }
        return ["ids": .array(ids), "hash": .object(hash), "count": .int(Int64(ids.count))]
    }

    private mutating func tick(now: SimMicros) -> [SimServerCommand] {
        ticks += 1
        var commands: [SimServerCommand] = []
        for channel in members.keys.sorted() {
            let message = BirdMessage(event: settings.eventName, channel: channel,
                                     data: BirdMessage.encoded(["n": .int(ticks), "t": .int(now)]))
            for id in subscribers(of: channel) where sessions[id]?.isClosing == false {
                commands.append(.send(id, message.frame))
            }
        }
        return commands + settings.nextTick(after: now)
    }
}
