import Bird
import Sim
import Testing
import Vocabulary
import WebSocket

/// Long randomised sessions over `Loopback` (server deaths, restarts, close codes of every
/// band, stalled pongs) with the lifecycle's promises checked on the whole trace, for many
/// seeds: the correct client must keep every one of them, whatever happens.
@Suite struct SimClientInvariantTests {
    static func session(seed: UInt64) -> Loopback {
        var server = SimChannelTests.server { $0.activityTimeout = 20; $0.eventInterval = .s(7) }
        server.appKey = "sim-key"
        let clients = (1...2).map { number in SimChannelTests.client { $0.userID = "u\(number)"; $0.triggerInterval = .s(3) } }
        var net = Loopback(server: server, clients: clients, seed: seed)
        var dice = SeededGenerator(seed: seed &* 7919)
        var stalled = false
        for index in clients.indices { net.client(index, .connect) }
        for _ in 0..<300 {
            net.run(for: .s(1))
            let roll = Double.random(in: 0..<1, using: &dice)
            switch roll {
            case ..<0.02 where net.serverUp: net.killServer(Bool.random(using: &dice) ? .fin : .reset)
            case ..<0.15 where !net.serverUp: net.startServer()
            case ..<0.05:
                let code = [4200, 4201, 4202, 1000, 1001, 1011, 4100, 4150, 4300, 3000].randomElement(using: &dice)!
                net.serverCloses(client: Int.random(in: 0..<2, using: &dice), code: UInt16(code))
            case ..<0.07:
                stalled.toggle()
                let stall = stalled
                net.serverToClient = { !stall || (BirdMessage.parse($0)?.event != "bird:pong" && $0.opcode != .pong) }
            default: break
            }
        }
        return net
    }

    @Test(arguments: 1...12)
    func correctClientKeepsEveryPromise(seed: Int) throws {
        let net = Self.session(seed: UInt64(seed))
        for index in 0..<2 {
            var problems: [String] = []
            var attempts = 0
            var pending: (at: SimMicros, bound: SimMicros?)?  // a reconnect owed: by when
            var socket: SimSocketID?
            var subscribed: Set<String> = []
            var connectedAt: SimMicros?
            var sentSinceConnected: [String] = []
            var failed = false
            var lastPing: SimMicros?
            for (time, command) in net.commands[index] {
                switch command {
                case .openSocket(let id):
                    if failed { problems.append("\(time): opened a socket after failed") }
                    if let owed = pending {
                        let delay = time - owed.at
                        if let bound = owed.bound {
                            if delay > bound { problems.append("\(time): delay \(delay) > bound \(bound) at attempt \(attempts + 1)") }
                        } else if delay != 0 {
                            problems.append("\(time): immediate reconnect came \(delay) late")
                        }
                    }
                    pending = nil
                    attempts += 1
                    socket = id
                    subscribed = []
                case .stateChanged(let from, let to, let detail):
                    switch to {
                    case .unavailable: pending = (time, Backoff().bound(attempt: attempts + 1))
                    case .connecting where from == .connected || from == .connecting: pending = (time, nil)
                    case .connected:
                        attempts = 0
                        connectedAt = time
                        sentSinceConnected = []
                    case .failed: failed = true
                    default: break
                    }
                    if to == .connecting, detail.contains("closed 42"), from == .unavailable {
                        problems.append("\(time): a 4200-band close went through backoff")
                    }
                    if to != .connected { connectedAt = nil }
                case .send(let id, let frame):
                    guard id == socket, let message = BirdMessage.parse(frame) else { continue }
                    if message.event.hasPrefix("client-"), !subscribed.contains(message.channel ?? "") {
                        problems.append("\(time): client event on unsubscribed \(message.channel ?? "?")")
                    }
                    if message.event == "bird:ping" { lastPing = time }
                    if connectedAt == time { sentSinceConnected.append(message.event + " " + (message.decodedData["channel"]?.stringValue ?? "")) }
                case .log(let line):
                    if line.hasPrefix("subscribed ") { subscribed.insert(String(line.dropFirst("subscribed ".count))) }
                    if line.hasPrefix("subscription_error") { problems.append("\(time): \(line)") }
                case .close(_, let code, _):
                    if code == 4201, let ping = lastPing, time - ping < SimClientSettings().pongTimeout {
                        problems.append("\(time): stale close \(time - ping) after the ping")
                    }
                case .schedule, .cancel, .delivered: break
                }
                if let at = connectedAt, at == time, case .log(let line) = command, line == "signed in as u\(index + 1)" {
                    // On every connection: all three subscribes and the sign-in went out at the handshake.
                    let expected = ["bird:subscribe news", "bird:subscribe private-chat", "bird:subscribe presence-lobby", "bird:signin "]
                    if !expected.allSatisfy(sentSinceConnected.contains) { problems.append("\(time): after connected sent only \(sentSinceConnected)") }
                }
            }
            #expect(problems.isEmpty, "client \(index + 1), seed \(seed): \(problems.prefix(5))")
            // The session really exercised reconnects.
            #expect(net.opens(index).count >= 3, "client \(index + 1), seed \(seed): only \(net.opens(index).count) sockets")
        }
        #expect(!net.serverCommands.contains { if case .log(let line) = $0.command { line.contains("bad auth") } else { false } })
    }
}
