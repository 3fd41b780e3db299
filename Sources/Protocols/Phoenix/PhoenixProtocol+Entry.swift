import Protocols

/// What the Phoenix entry claims for detection.
extension PhoenixProtocol {
    /// Phoenix's socket URL: the transport path `.../websocket` with the serializer
    /// version `vsn=` in the query (phoenix.js adds both).
    public static func claim(upgrade: UpgradeEvidence) -> String? {
        guard upgrade.path.hasSuffix("/websocket"), upgrade.query.contains(where: { $0.name == "vsn" }) else { return nil }
        return "the upgrade's path .../websocket?vsn= is a Phoenix socket's URL"
    }

    /// A Phoenix message (V2 array or V1 object) on the socket's own topic `phoenix` or
    /// joining a channel: no other protocol sends those.
    public static func claim(message payload: [UInt8]) -> String? {
        guard let message = PhoenixMessage.parse(payload),
              message.topic == socketTopic || message.event == "phx_join" else { return nil }
        let what = message.event == "phx_join" ? "phx_join" : "message on topic phoenix"
        return "a message is a Phoenix Channels \(message.serializer == .v2 ? "V2" : "V1") \(what)"
    }
}
