import Testing
@testable import Reports

/// What keeps a report's per-client logs small once they fill (a long capture): lists held
/// at their size, and repeated texts held once.
@Suite struct ReportMemoryTests {
    @Test func aFullLogHoldsNoRoomBeyondItsLimits() {
        let limits = ReportLimits.standard
        var log = BoundedLog<Int>()
        for n in 0..<(limits.head + limits.tail + 100) { log.append(n, limits: limits) }
        // Grown by doubling, each list would have room for 32; a malloc size class may
        // leave one or two slots over.
        #expect(log.room < limits.head + limits.tail + 4, "room \(log.room)")
        #expect(log.elements == Array(0..<limits.head) + Array((limits.head + 100)..<(limits.head + limits.tail + 100)))
        #expect(log.omitted == 100)
    }

    @Test func equalTextsAreHeldOnce() {
        var pool = StringPool()
        // Made apart, as two connections' ends are: equal texts in two allocations.
        let first = pool.shared(String(repeating: "close 1000 from ", count: 1) + "client")
        let second = pool.shared("close 1000 from " + String("client".reversed().reversed()))
        #expect(first == second)
        #expect(address(of: first) != nil && address(of: first) == address(of: second))
        #expect(pool.count == 1)
        // Short texts are stored inline: nothing is pooled.
        #expect(pool.shared("capture end") == "capture end")
        #expect(pool.count == 1)
    }

    /// Unique texts come first (every client's handshake precedes its first close): a full
    /// pool forgets those met once, so the closes that follow are still held once.
    @Test func aFullPoolMakesRoomForTextsThatRepeat() {
        var pool = StringPool(capacity: 4)
        for n in 0..<10 { _ = pool.shared("handshake socket_id \(n).\(n)") }
        #expect(pool.count <= 4)
        let first = pool.shared("close 4009 from " + String("server".reversed().reversed()))
        let second = pool.shared("close 4009 from " + String("server".reversed().reversed()))
        #expect(first == second)
        #expect(address(of: first) != nil && address(of: first) == address(of: second))
        #expect(pool.count <= 4)
    }

    /// Full of texts that repeat, the pool keeps them and takes no new one.
    @Test func aPoolOfRepeatedTextsStopsGrowingAtItsCapacity() {
        var pool = StringPool(capacity: 3)
        let repeated = (0..<3).map { "close 400\($0) from server" }
        for text in repeated + repeated { _ = pool.shared(text) }
        #expect(pool.count == 3)
        let new = pool.shared("handshake socket_id " + "9.9")
        #expect(new == "handshake socket_id 9.9")
        #expect(address(of: new) != address(of: pool.shared("handshake socket_id " + "9.9")))
        #expect(pool.count == 3)
        // The texts held are still shared.
        let held = pool.shared("close 4001 from " + String("server".reversed().reversed()))
        #expect(address(of: held) == address(of: pool.shared("close 4001 from " + "server")))
    }

    private func address(of text: String) -> UnsafeRawPointer? {
        text.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }
}
