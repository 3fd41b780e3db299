import Protocols
import Testing
import ProtocolTable

/// Detection picks the Socket.IO entry from engine.io's upgrade URL or its open packet,
/// and from nothing another protocol sends; a spec's `events: socketio` chooses it too.
@Suite struct SocketIODetectionTests {
    func detector() -> ProtocolDetector { ProtocolTable.standard.detector() }

    @Test func theUpgradeURLClaimsTheConnection() throws {
        var detector = detector()
        let offered = detector.offer(upgrade: UpgradeEvidence(target: "/socket.io/?transport=websocket&EIO=4"))
        let choice = try #require(offered)
        #expect(choice.key == "socketio")
        #expect(choice.reason == "the upgrade's path /socket.io/?EIO=4 is engine.io v4's URL")
        var custom = self.detector()
        #expect(custom.offer(upgrade: UpgradeEvidence(target: "/realtime/?EIO=4&transport=websocket"))?.key == "socketio")
        // engine.io v3 (pings the other way) and Pusher's URL are not claimed as this entry.
        var old = self.detector()
        #expect(old.offer(upgrade: UpgradeEvidence(target: "/socket.io/?EIO=3&transport=websocket")) == nil)
        var pusher = self.detector()
        #expect(pusher.offer(upgrade: UpgradeEvidence(target: "/app/key?protocol=7"))?.key == "bird")
    }

    @Test func theOpenPacketClaimsTheConnectionAsAFirstMessage() throws {
        var detector = detector()
        #expect(detector.offer(upgrade: UpgradeEvidence(target: "/ws")) == nil)
        let open = #"0{"sid":"cEWnnDEhDX5bIJvjAAAB","upgrades":[],"pingTimeout":500,"pingInterval":1000,"maxPayload":1000000}"#
        let offered = detector.offer(message: Array(open.utf8))
        let choice = try #require(offered)
        #expect(choice.key == "socketio")
        // What other protocols send is not claimed: a Pusher handshake goes to Bird, and
        // a bare digit or JSON number to nobody.
        var other = self.detector()
        #expect(other.offer(message: Array("2".utf8)) == nil)
        #expect(other.offer(message: Array("0".utf8)) == nil)
        #expect(other.offer(message: Array(#"0{"id":1}"#.utf8)) == nil)
        #expect(other.offer(message: Array(#"{"event":"pusher:connection_established","data":"{}"}"#.utf8))?.key == "bird")
    }

    @Test func theSpecChoosesTheEntryByKeyOrAlias() {
        let table = ProtocolTable.standard
        #expect(type(of: table.entry(for: "socketio")).key == "socketio")
        #expect(type(of: table.entry(for: "socket.io")).key == "socketio")
        #expect(table.registration(named: "socketio")?.defaultSpec == "socketio")
        // After Bird, before the connection-level entry.
        let keys = table.registrations.map(\.key)
        #expect(keys.firstIndex(of: "bird")! < keys.firstIndex(of: "socketio")!)
        #expect(keys.last == "websocket")
    }
}
