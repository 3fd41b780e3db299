@testable import Capture
import JSON
import Testing

/// The direct decoder finds a member's key in a hashed table: every key of the format
/// must be found by its name, and nothing else may be taken for one.
@Suite struct RecordKeyTableTests {
    static func key(named name: String) -> RecordKey? {
        let bytes = Array("\"\(name)\"".utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            guard let token = scanner.string() else { return nil }
            return RecordKey.named(token, in: scanner)
        }
    }

    static func name(of key: RecordKey) -> String {
        String(decoding: UnsafeBufferPointer(start: key.name.utf8Start, count: key.name.utf8CodeUnitCount), as: UTF8.self)
    }

    /// (`DirectDecoderTests.everyKeyNameIsFound` finds every key by its name.)
    @Test func nearMissesAreNoKey() {
        // Every key once in the table, nothing else in it.
        #expect(RecordKey.table.compactMap { $0 }.sorted { $0.rawValue < $1.rawValue } == RecordKey.allCases)
        for key in RecordKey.allCases {
            let name = Self.name(of: key)
            var misses = [String(name.dropLast()), name + "x", "x" + name, name.uppercased(), String(name.dropFirst())]
            misses.append(String(name.first!) + String(repeating: "_", count: max(0, name.count - 2)) + String(name.last!))
            for miss in misses where !RecordKey.allCases.map(Self.name(of:)).contains(miss) {
                #expect(Self.key(named: miss) == nil, "\(miss)")
            }
        }
        #expect(Self.key(named: "") == nil)
        // An escaped spelling is not matched here: the tree-based decoder reads that line.
        #expect(Self.key(named: #"typ\u0065"#) == nil)
    }
}
