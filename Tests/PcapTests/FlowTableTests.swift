import Testing
import Vocabulary
import WebSocket
@testable import Pcap

@Suite struct FlowTableTests {
    final class Entry: FlowTableEntry {
        let key: FlowKey
        init(_ key: FlowKey) { self.key = key }
    }

    static func key(_ n: Int, v6: Bool = false) -> FlowKey {
        let address = v6 ? IPAddress(ipv6High: 0x2001_0DB8 << 32, low: UInt64(n % 7)) : IPAddress(ipv4: 0x0A00_0000 | UInt32(n % 5))
        return FlowKey(Endpoint(address, UInt16(40000 + n)), Endpoint(IPAddress(ipv4: 0x0A00_00FE), 443))
    }

    /// Random inserts, lookups and removals against a Dictionary: probe runs that wrap
    /// around the table's end and removals that shift later slots back included.
    @Test func behavesLikeADictionaryUnderChurn() {
        for seed in [UInt64(0), 1, 0xDEAD_BEEF] {
            var table = FlowTable<Entry>(seed: seed)
            var model: [FlowKey: Entry] = [:]
            var generator = SeededGenerator(seed: seed &+ 5)
            for step in 0..<20_000 {
                // The live population swings between a few and a few hundred.
                let span = step % 4000 < 2000 ? 300 : 40
                let key = Self.key(Int.random(in: 0..<span, using: &generator), v6: Bool.random(using: &generator))
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    if model[key] == nil {
                        let entry = Entry(key)
                        table.insert(entry)
                        model[key] = entry
                    }
                case 1:
                    #expect(table.removeValue(forKey: key) === model.removeValue(forKey: key))
                default:
                    #expect(table[key] === model[key])
                }
                #expect(table.count == model.count)
            }
            for (key, entry) in model { #expect(table[key] === entry) }
            #expect(Set(table.values.map(ObjectIdentifier.init)) == Set(model.values.map(ObjectIdentifier.init)))
        }
    }

    @Test func emptiesAndIsUsableAgain() {
        var table = FlowTable<Entry>(seed: 9)
        let entries = (0..<100).map { Entry(Self.key($0)) }
        for entry in entries { table.insert(entry) }
        #expect(table.count == 100)
        table.removeAll()
        #expect(table.count == 0 && table[entries[0].key] == nil && table.values.isEmpty)
        table.insert(entries[1])
        #expect(table[entries[1].key] === entries[1])
    }
}
