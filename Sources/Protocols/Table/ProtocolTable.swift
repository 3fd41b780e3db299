import Bird
import Protocols

/// The protocol table, in the manner of Wireshark's dissector tables: every wire protocol
/// Faultline decodes is one entry (a `WireProtocol`), registered here under its key, and
/// the lifecycle spec chooses one by its `events` setting (`prefix` fixes Bird/Pusher's
/// dialect). Only this file knows every entry; entries never know each other.
///
/// Adding a protocol (Socket.IO, Phoenix Channels, graphql-ws): write its module beside
/// `Bird` with one `WireProtocol` type, register it below, and name its key in a spec's
/// `events`. See docs/protocols.md.
public struct ProtocolTable: Sendable {
    /// One registration: the entry's key, the spec `events` values that choose it, and how
    /// to make a fresh instance (each holds its own learned dialect).
    public struct Registration: Sendable {
        public var key: String
        public var summary: String
        public var aliases: [String]
        public var make: @Sendable (_ prefix: String?) -> any WireProtocol
    }

    public private(set) var registrations: [Registration]

    /// The built-in entries.
    public static let standard = ProtocolTable(registrations: [
        Registration(key: BirdDecoder.key, summary: BirdDecoder.summary, aliases: ["realtime", "pusher"],
                     make: { BirdDecoder(prefix: $0) }),
        Registration(key: ConnectionLevelProtocol.key, summary: ConnectionLevelProtocol.summary, aliases: ["connection"],
                     make: { _ in ConnectionLevelProtocol() }),
    ])

    public init(registrations: [Registration]) {
        self.registrations = registrations
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
}
