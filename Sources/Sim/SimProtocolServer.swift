import Vocabulary
import WebSocket

/// A wire protocol the simulator server speaks, without sockets: the runner feeds it every
/// connection's events and carries out its commands. Bird/Pusher is `SimServer`; each
/// protocol pack adds its own machine (Socket.IO, graphql-ws, Phoenix, SignalR) and one
/// line in `SimServerProtocols.all`, so the runner, the CLI and the demo never know which
/// protocol they serve.
public protocol SimProtocolServer: Sendable {
    var settings: SimServerSettings { get }
    /// The subprotocol the server accepts from the client's offered `Sec-WebSocket-Protocol`
    /// list, echoed in the 101 response; nil to echo none (the default).
    func acceptedSubprotocol(offered: [String]) -> String?
    /// What to do at start. Default: schedule the first periodic server event.
    mutating func start(now: SimMicros) -> [SimServerCommand]
    mutating func handle(_ event: SimServerEvent, now: SimMicros) -> [SimServerCommand]
}

extension SimProtocolServer {
    public func acceptedSubprotocol(offered: [String]) -> String? { nil }
    public mutating func start(now: SimMicros) -> [SimServerCommand] { settings.nextTick(after: now) }
}

/// The shape of the machines that keep one value per connection by its id (Socket.IO,
/// graphql-ws, Phoenix): the runner's events are dispatched here, once, so a machine says
/// only what it does with each, and what they all do alike (frames and `--close-after` go
/// to live connections only, a closed connection is forgotten) is said once.
protocol SimConnectionTable: SimProtocolServer {
    associatedtype Connection: SimTableConnection
    var connections: [SimConnectionID: Connection] { get set }
    /// A new connection: keep it (or refuse it), and what to send and schedule.
    mutating func opened(_ id: SimConnectionID, path: String, now: SimMicros) -> [SimServerCommand]
    /// A frame from a live connection.
    mutating func received(_ frame: Frame, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand]
    /// The periodic server event; it ends with the next one (`settings.nextTick`).
    mutating func tick(now: SimMicros) -> [SimServerCommand]
    /// `--close-after`'s time came for a live connection.
    mutating func closeAfter(_ id: SimConnectionID) -> [SimServerCommand]
    /// One of the machine's own per-connection timers, by its tag. Default: nothing.
    mutating func timer(_ tag: Int, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand]
}

/// A connection as such a machine keeps it.
protocol SimTableConnection: Sendable {
    /// The server began closing it: it sends and answers nothing more.
    var closing: Bool { get }
}

extension SimConnectionTable {
    public mutating func handle(_ event: SimServerEvent, now: SimMicros) -> [SimServerCommand] {
        switch event {
        case .opened(let id, let path): return opened(id, path: path, now: now)
        case .received(let id, let frame): return isLive(id) ? received(frame, on: id, now: now) : []
        case .closed(let id): return forget(id)
        case .timer(.tick): return tick(now: now)
        case .timer(.closeAfter(let id)): return isLive(id) ? closeAfter(id) : []
        case .timer(.connection(let id, let tag)): return timer(tag, on: id, now: now)
        }
    }

    mutating func timer(_ tag: Int, on id: SimConnectionID, now: SimMicros) -> [SimServerCommand] { [] }

    /// The connection is kept and not closing.
    func isLive(_ id: SimConnectionID) -> Bool { connections[id]?.closing == false }

    /// The runner's `.closed`: forgets the connection, logged once (an id the machine does
    /// not keep, refused or already forgotten, is no news).
    mutating func forget(_ id: SimConnectionID) -> [SimServerCommand] {
        guard connections.removeValue(forKey: id) != nil else { return [] }
        return [.log("connection \(id): closed")]
    }
}

extension SimServer: SimProtocolServer {}

extension SimServerSettings {
    /// The periodic server event's next timer, `eventInterval` after `now`; none when the
    /// interval is unset or not positive. Every protocol machine's `start` and tick use it.
    public func nextTick(after now: SimMicros) -> [SimServerCommand] {
        guard let interval = eventInterval, interval > 0 else { return [] }
        return [.schedule(.tick, at: now + interval)]
    }
}

/// The protocols `faultline sim server --protocol NAME` can speak, by name, in the order
/// `--help` lists them. A pack registers one line here.
public enum SimServerProtocols {
    public struct Registration: Sendable {
        public var name: String
        public var summary: String
        public var make: @Sendable (_ settings: SimServerSettings, _ seed: UInt64) -> any SimProtocolServer
    }

    public static let all: [Registration] = [
        Registration(name: "bird", summary: "Bird Realtime / Pusher protocol 7 (the default)",
                     make: { SimServer(settings: $0, seed: $1) }),
        Registration(name: "socketio", summary: "Socket.IO v5 over engine.io v4 (websocket transport)",
                     make: { SocketIOServer(settings: $0, seed: $1) }),
        Registration(name: "graphql-ws", summary: "graphql-ws (graphql-transport-ws): ack, ping/pong, a next per subscription",
                     make: { settings, _ in GraphQLWSSimServer(settings: settings) }),
        Registration(name: "signalr", summary: "ASP.NET Core SignalR, JSON hub protocol (negotiation skipped)",
                     make: { SignalRSimServer(settings: $0, seed: $1) }),
        Registration(name: "phoenix", summary: "Phoenix Channels (V2 arrays; V1 objects when the URL says vsn=1.0.0)",
                     make: { settings, _ in PhoenixSimServer(settings: settings) }),
    ]

    public static var names: [String] { all.map(\.name) }

    /// The server machine for `settings.protocolName`; nil when no protocol has that name.
    public static func make(_ settings: SimServerSettings, seed: UInt64) -> (any SimProtocolServer)? {
        all.first { $0.name == settings.protocolName }?.make(settings, seed)
    }
}
