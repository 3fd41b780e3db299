import Demo
import Testing

/// The demo's live view comes out in time order: a finding stamped before a state change
/// that was printed first is let out before it.
@Suite struct LiveViewOrderTests {
    @Test func aLaterArrivingEarlierLineGoesOutFirst() {
        var order = LiveViewOrder()
        #expect(order.add("close at 3.020", at: 3_020_000).isEmpty)
        #expect(order.add("finding at 3.019", at: 3_019_000).isEmpty)
        #expect(order.due(at: 3_100_000).isEmpty, "held for \(LiveViewOrder.hold) µs")
        #expect(order.add("again at 3.020", at: 3_020_000).isEmpty)
        #expect(order.due(at: 3_020_000 + LiveViewOrder.hold) == ["finding at 3.019", "close at 3.020", "again at 3.020"])
        #expect(order.drain().isEmpty)
    }

    @Test func drainLetsEverythingOutSortedAndTheBoundHolds() {
        var order = LiveViewOrder()
        _ = order.add("b", at: 2)
        _ = order.add("a", at: 1)
        #expect(order.drain() == ["a", "b"])
        var out: [String] = []
        for i in 0...LiveViewOrder.maxHeld { out += order.add("\(i)", at: Int64(i)) }
        #expect(out == ["0"], "past the bound the oldest goes out at once")
        #expect(order.drain().count == LiveViewOrder.maxHeld)
    }

    @Test func theTimeOfALiveCheckLine() {
        #expect(LiveViewOrder.time(of: "3.019 s  client-1 conn 1  WARNING server.pong-missing") == 3_019_000)
        #expect(LiveViewOrder.time(of: "client-1 3.0 s") == nil)
        #expect(LiveViewOrder.time(of: "-1.0 s  x") == nil)
        #expect(LiveViewOrder.time(of: "1e300 s  x") == nil)
    }
}
