import Bird
import JSON
import Sim
import Testing
import WebSocket

/// A server's handshake `activity_timeout` of 1e300 trapped `sim client` (issue 15, item 1).
@Suite struct SimHostileNumberTests {
    @Test func handshakeActivityTimeoutOf1e300IsClamped() {
        var client = SimClient(settings: SimClientLifecycleTests.settings { $0.useHandshakeActivityTimeout = true }, seed: 1)
        _ = client.handle(.connect, now: 0)
        _ = client.handle(.socketOpened(1), now: 0)
        let data: JSONValue = ["socket_id": .string("1.2"), "activity_timeout": .double(1e300)]
        let frame = BirdMessage(event: "bird:connection_established", data: BirdMessage.encoded(data)).frame
        _ = client.handle(.received(1, frame), now: 0)
        #expect(client.state == .connected)
        #expect(client.activityTimeout == SimDuration.seconds(SimDuration.maxSeconds))
    }

    @Test func durationsAreClampedOrRefused() {
        #expect(SimDuration.seconds(.nan) == 0)
        #expect(SimDuration.seconds(1e300) == 1_000_000_000 * SimDuration.second)
        #expect(SimDuration.parse("1e300s") == nil)
        #expect(SimDuration.parse("1e300") == nil)
        #expect(SimDuration.parse("2s") == 2 * SimDuration.second)
    }
}
