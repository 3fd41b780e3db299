import Bird
import GraphQLWS
import Phoenix
import Protocols
import SignalR
import SocketIO

/// The protocol table, in the manner of Wireshark's dissector tables: every wire protocol
/// Faultline decodes is one entry (a `WireProtocol`), registered here under its key. The
/// lifecycle spec chooses one by its `events` setting (`prefix` fixes Bird/Pusher's
/// dialect); with no spec, `detector()` chooses one from the upgrade request and the first
/// messages. Only this file knows every entry; entries never know each other.
///
/// Adding a protocol (Socket.IO, Phoenix Channels, graphql-ws): write its module beside
/// `Bird` with one `WireProtocol` type, register it below, and name its key in a spec's
/// `events`. See docs/protocols.md.
public struct ProtocolTable: Sendable {
    /// One registration: the entry's key, the spec `events` values that choose it, the
    /// built-in spec that judges its clients when detection chose it, its detection claims,
    /// and how to make a fresh instance (each holds its own learned dialect).
    public struct Registration: Sendable {
        public var key: String
        public var summary: String
        public var aliases: [String]
        /// The built-in spec `analyze` and `proxy --live` use when detection chose this entry.
        public var defaultSpec: String
        public var claimant: ProtocolDetector.Claimant
        public var make: @Sendable (_ prefix: String?) -> any WireProtocol

        /// The registration of the entry `type`: key, summary and claims from the type.
        public init<P: WireProtocol>(_ type: P.Type, aliases: [String] = [], defaultSpec: String,
                                     make: @escaping @Sendable (_ prefix: String?) -> any WireProtocol) {
            key = P.key
            summary = P.summary
            self.aliases = aliases
            self.defaultSpec = defaultSpec
            claimant = ProtocolDetector.Claimant(type)
            self.make = make
        }
    }

    public private(set) var registrations: [Registration]

    /// The built-in entries, in detection order (the first claim wins).
    public static let standard = ProtocolTable(registrations: [
        Registration(BirdDecoder.self, aliases: ["realtime", "pusher"], defaultSpec: "bird",
                     make: { BirdDecoder(prefix: $0) }),
        Registration(SocketIOProtocol.self, aliases: ["socket.io", "engine.io"], defaultSpec: "socketio",
                     make: { _ in SocketIOProtocol() }),
        Registration(GraphQLWSProtocol.self, aliases: ["graphql-transport-ws"], defaultSpec: "graphql-ws",
                     make: { _ in GraphQLWSProtocol() }),
        Registration(SignalRProtocol.self, defaultSpec: "signalr", make: { _ in SignalRProtocol() }),
        Registration(PhoenixProtocol.self, aliases: ["phoenix-channels"], defaultSpec: "phoenix",
                     make: { _ in PhoenixProtocol() }),
        Registration(ConnectionLevelProtocol.self, aliases: ["connection"], defaultSpec: "websocket",
                     make: { _ in ConnectionLevelProtocol() }),
    ])

    /// The spec used when nothing names one and detection found no entry: Bird's, as before
    /// detection existed, so that every report without `--spec` stays what it was.
    public static let fallbackSpec = "bird"

    public init(registrations: [Registration]) {
        self.registrations = registrations
    }

    /// This table with `registration` added (after the built-in entries: a test's toy
    /// entry, a pack's entry).
    public func adding(_ registration: Registration) -> ProtocolTable {
        ProtocolTable(registrations: registrations + [registration])
    }

    /// The registration chosen by `name`, a key or an alias (a spec's `events` value).
    public func registration(named name: String) -> Registration? {
        registrations.first { $0.key == name || $0.aliases.contains(name) }
    }

    /// A fresh instance of the entry `name` chooses; the connection-level entry for a name
    /// no entry claims (nothing is decoded then).
    public func entry(for name: String, prefix: String? = nil) -> any WireProtocol {
        registration(named: name)?.make(prefix) ?? ConnectionLevelProtocol()
    }

    /// A detector asking every entry's claims, in table order.
    public func detector() -> ProtocolDetector {
        ProtocolDetector(claimants: registrations.map(\.claimant))
    }
}
