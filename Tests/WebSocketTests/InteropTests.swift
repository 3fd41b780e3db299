import Testing
import TestSupport
import WebSocket

/// Our codec over a plain socket against Python's `websockets` (Tests/Peers), both ways:
/// text, binary, fragmented messages, ping/pong both ways, close with 4009, with and
/// without permessage-deflate.
@Suite("Interop with Python websockets", .serialized)
struct InteropTests {
    static let peers = TestEnvironment.path("Tests/Peers")

    @Test("our client against a Python server", arguments: [false, true])
    func ourClient(deflate: Bool) throws {
        let server = try ChildProcess.python("\(Self.peers)/ws_echo_server.py", deflate ? [] : ["--no-compression"])
        defer { server.stop() }
        let ready = try #require(server.waitForLine { $0.hasPrefix("READY ") }, "server never printed READY: \(server.errorOutput)")
        let port = try #require(UInt16(ready.dropFirst(6)))

        let connection = try WireConnection.connect(port: port, offerDeflate: true)
        #expect(connection.deflateNegotiated == deflate)

        try connection.sendText("hello ✓")
        #expect(try connection.readEvent().text == "hello ✓")

        let blob = patternBytes(70_000)
        try connection.sendMessage(.binary, blob)
        #expect(try connection.readEvent() == .message(.binary, blob, frames: 1, compressed: deflate))

        // Three fragments with a ping between the first and the second.
        try connection.sendMessage(.text, Array("fragmented".utf8), fragments: 3,
                                   between: [Frame(opcode: .ping, payload: Array("mid".utf8))])
        #expect(try connection.readEvent() == .pong(Array("mid".utf8)))
        #expect(try connection.readEvent().text == "fragmented")

        try connection.sendText("fragment-me")
        let fragmented = try connection.readEvent()
        #expect(fragmented.text == "fragmented")
        // websockets sends a fragmented message as its pieces plus an empty final frame.
        if case .message(_, _, let frames, _) = fragmented { #expect(frames >= 3) }

        try connection.sendText("ping-me")
        #expect(try connection.readEvent() == .ping(Array("from-python".utf8)))
        try connection.send(Frame(opcode: .pong, payload: Array("from-python".utf8)))
        #expect(try connection.readEvent().text == "pong-received")

        try connection.sendText("close-4009")
        #expect(try connection.readEvent() == .close(ClosePayload(code: 4009, reason: "bye")))
        try connection.send(Frame.close(code: 4009, reason: "bye"))
        #expect(try connection.readEvent() == .endOfStream)
        // The server half-closed after the close handshake and waits for our side to go.
        connection.socket.close()

        #expect(server.waitForLine { $0.hasPrefix("CLOSED") } == "CLOSED 4009 bye",
                "server: \(server.output) \(server.errorOutput)")
        #expect(connection.violations.isEmpty, "\(connection.violations)")
    }

    @Test("a Python client against our server", arguments: [false, true])
    func ourServer(deflate: Bool) throws {
        let (listener, port) = try TestSocket.listen()
        let client = try ChildProcess.python("\(Self.peers)/ws_client.py",
                                             ["ws://127.0.0.1:\(port)/"] + (deflate ? ["--deflate"] : []))
        defer { client.stop() }
        let (connection, request) = try WireConnection.accept(on: listener, allowDeflate: deflate)
        #expect(request.headers.first(named: "sec-websocket-version") == "13")
        #expect(connection.deflateNegotiated == deflate)

        var sawPing = false
        var sawFragmented = false
        var closed = false
        var steps = 0
        while !closed, steps < 50 {
            steps += 1
            let event = try connection.readEvent()
            switch event {
            case .ping(let payload):
                sawPing = true
                try connection.send(Frame(opcode: .pong, payload: payload))
            case .message(let opcode, let payload, let frames, _):
                if frames > 1 { sawFragmented = true }
                switch event.text {
                case "close-4009":
                    try connection.send(Frame.close(code: 4009, reason: "bye"))
                    #expect(try connection.readEvent() == .close(ClosePayload(code: 4009, reason: "bye")))
                    closed = true
                case "fragment-me":
                    try connection.sendMessage(.text, Array("fragmented".utf8), fragments: 3)
                case "ping-me":
                    try connection.send(Frame(opcode: .ping, payload: Array("from-swift".utf8)))
                    #expect(try connection.readEvent() == .pong(Array("from-swift".utf8)))
                    try connection.sendText("pong-received")
                default:
                    try connection.sendMessage(opcode, payload)
                }
            case .pong, .close, .endOfStream:
                Issue.record("unexpected \(event); client said \(client.output) \(client.errorOutput)")
                closed = true
            }
        }
        connection.socket.close()

        #expect(client.waitForExit(timeout: 10) == 0, "client: \(client.output) \(client.errorOutput)")
        let lines = client.output
        for step in ["OK text", "OK binary", "OK fragmented", "OK ping", "OK fragment-me", "OK ping-me", "CLOSED 4009 bye"] {
            #expect(lines.contains(step), "missing \(step) in \(lines)")
        }
        #expect(lines.contains { $0.hasPrefix("EXTENSIONS") && $0.contains("permessage-deflate") } == deflate)
        #expect(sawPing)
        #expect(sawFragmented)
        #expect(connection.violations.isEmpty, "\(connection.violations)")
    }
}
