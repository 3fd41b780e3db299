import Testing
@testable import Protocols

/// The decoders' string table: what it keeps comes back for the same bytes only, it never
/// grows past its limit, and emptying it forgets everything.
@Suite struct InternedStringsTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func lookUp(_ table: InternedStrings<Int>, _ text: String) -> (text: String, value: Int)? {
        Self.bytes(text).withUnsafeBufferPointer { table.lookUp($0) }
    }

    func keep(_ table: inout InternedStrings<Int>, _ text: String, _ value: Int) {
        Self.bytes(text).withUnsafeBufferPointer { table.keep($0, text: text, value: value) }
    }

    @Test func keptStringsComeBackForTheirBytesOnly() {
        var table = InternedStrings<Int>(limit: 8)
        #expect(lookUp(table, "bird:connection_established") == nil)
        keep(&table, "bird:connection_established", 1)
        keep(&table, "bird:ping", 2)
        keep(&table, "", 3)
        #expect(lookUp(table, "bird:connection_established")?.value == 1)
        #expect(lookUp(table, "bird:connection_established")?.text == "bird:connection_established")
        #expect(lookUp(table, "bird:ping")?.value == 2)
        #expect(lookUp(table, "")?.value == 3)
        // Same length, same first bytes, a prefix, a longer string: all misses.
        #expect(lookUp(table, "bird:pong") == nil)
        #expect(lookUp(table, "bird:pin") == nil)
        #expect(lookUp(table, "bird:pingg") == nil)
        #expect(table.count == 3)
    }

    @Test func itStopsKeepingAtItsLimit() {
        var table = InternedStrings<Int>(limit: 5)
        for n in 0..<20 { keep(&table, "private-user-\(n)", n) }
        #expect(table.count == 5)
        for n in 0..<5 { #expect(lookUp(table, "private-user-\(n)")?.value == n) }
        for n in 5..<20 { #expect(lookUp(table, "private-user-\(n)") == nil) }
    }

    @Test func aFullTableStillFindsEveryStringItKept() {
        // Half the slots taken: every probe sequence must still end on an empty slot.
        var table = InternedStrings<Int>(limit: 64)
        let names = (0..<64).map { "event-\($0 * 7919)" }
        for (n, name) in names.enumerated() { keep(&table, name, n) }
        for (n, name) in names.enumerated() { #expect(lookUp(table, name)?.value == n) }
        #expect(lookUp(table, "event-unknown") == nil)
    }

    @Test func removeAllForgetsEverything() {
        var table = InternedStrings<Int>(limit: 4)
        keep(&table, "a", 1)
        table.removeAll()
        #expect(table.count == 0)
        #expect(lookUp(table, "a") == nil)
        keep(&table, "a", 2)
        #expect(lookUp(table, "a")?.value == 2)
    }

    @Test func aNameOnlyTableGivesBackTheNameItKeptUpToItsLimit() {
        var names = InternedNames(limit: 2)
        for name in ["private-user-173", "presence-room", "third"] {
            Self.bytes(name).withUnsafeBufferPointer { names.keep($0, name: name) }
        }
        func lookUp(_ name: String) -> String? { Self.bytes(name).withUnsafeBufferPointer { names.lookUp(name: $0) } }
        #expect(lookUp("private-user-173") == "private-user-173")
        #expect(lookUp("presence-room") == "presence-room")
        #expect(lookUp("third") == nil)  // past the limit
        #expect(lookUp("private-user-17") == nil)
        #expect(names.count == 2)
    }
}
