import Bird
import JSON
import WebSocket

/// Channels, sign-in and client events: kept across connections, re-subscribed with fresh
/// signatures after every `connected`, and client events refused while unsubscribed.
extension SimClient {
    mutating func subscribe(_ channel: String) {
        if !channels.contains(channel) { channels.append(channel) }
        if handshakeDone, !subscribed.contains(channel) { sendSubscribe(channel) }
    }

    mutating func unsubscribe(_ channel: String) {
        channels.removeAll { $0 == channel }
        subscribed.remove(channel)
        if handshakeDone, let socket {
            emit(.send(socket, BirdMessage(event: settings.event("unsubscribe"), data: ["channel": .string(channel)]).frame))
        }
    }

    mutating func signin(_ user: String) {
        signinUser = user
        if handshakeDone, socketID != nil { sendSignin() }
    }

    /// `channel.trigger`: sent only on a private or presence channel whose subscription
    /// succeeded on this connection (the guide: it returns false while reconnecting).
    mutating func trigger(_ channel: String, event name: String) {
        guard handshakeDone, let socket else {
            emit(.log("trigger \(name) on \(channel) refused: not connected"))
            return
        }
        guard BirdChannelKind(channel: channel).needsAuth else {
            emit(.log("trigger \(name) on \(channel) refused: client events need a private or presence channel"))
            return
        }
        guard subscribed.contains(channel) || has(.triggerUnsubscribed) else {
            emit(.log("trigger \(name) on \(channel) refused: not subscribed"))
            return
        }
        triggersSent += 1
        let data: JSONValue = ["n": .int(Int64(triggersSent)), "from": .string(signinUser ?? "anonymous")]
        emit(.send(socket, BirdMessage(event: name, channel: channel, data: data).frame))
    }

    /// After a handshake: arm the stale check, re-subscribe every channel with fresh auth,
    /// and sign in again. The app greets its rooms once each subscription succeeds; only
    /// `--bug trigger-unsubscribed` greets them now, before (a correct client would refuse,
    /// so it is not asked: a "refused" line on every connect was noise).
    mutating func startConnection(_ now: SimMicros) {
        lastActivity = now
        schedule(.activity, at: now + activityTimeout)
        if let interval = settings.triggerInterval, interval > 0 { schedule(.trigger, at: now + interval) }
        let resubscribe = connectedCount <= 1 || !has(.skipResubscribe)
        for channel in channels where !earlySubscribed.contains(channel) && resubscribe {
            sendSubscribe(channel)
        }
        earlySubscribed = []
        if signinUser != nil, socketID != nil, !(has(.skipSignin) && signinSent) { sendSignin() }
        for channel in channels where BirdChannelKind(channel: channel).needsAuth && has(.triggerUnsubscribed) {
            trigger(channel, event: "client-hello")
        }
    }

    mutating func sendSubscribe(_ channel: String) {
        guard let socket else { return }
        let kind = BirdChannelKind(channel: channel)
        var data: JSONObject = ["channel": .string(channel)]
        if kind.needsAuth {
            guard let socketID else {
                emit(.log("cannot subscribe \(channel): no socket id to sign"))
                return
            }
            let user = signinUser ?? "anonymous"
            let channelData = kind == .presence
                ? JSONWriter.serialize(["user_id": .string(user), "user_info": ["name": .string(user)]]) : nil
            let secret = has(.badSignature) ? settings.appSecret + "-wrong" : settings.appSecret
            var auth = BirdAuth.channelAuth(appKey: settings.appKey, secret: secret, socketID: socketID,
                                           channel: channel, channelData: channelData)
            if has(.reuseAuth), let old = firstAuth[channel] { auth = old }
            if firstAuth[channel] == nil { firstAuth[channel] = auth }
            data["auth"] = .string(auth)
            if let channelData { data["channel_data"] = .string(channelData) }
        }
        emit(.send(socket, BirdMessage(event: settings.event("subscribe"), data: .object(data)).frame))
    }

    mutating func sendSignin() {
        guard let socket, let socketID, let user = signinUser else { return }
        let userData = JSONWriter.serialize(["id": .string(user)])
        let auth = BirdAuth.signinAuth(appKey: settings.appKey, secret: settings.appSecret, socketID: socketID, userData: userData)
        emit(.send(socket, BirdMessage(event: settings.event("signin"),
                                      data: ["auth": .string(auth), "user_data": .string(userData)]).frame))
        signinSent = true
    }
}
