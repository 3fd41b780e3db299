import Capture
import Foundation
import Testing
import TestSupport

/// The examples in docs/capture-format.md are real: each decodes, re-encodes to the same
/// bytes, and together they cover every record type.
@Suite struct DocsExamplesTests {
    static func exampleLines() throws -> [String] {
        let text = try String(contentsOfFile: TestEnvironment.path("docs/capture-format.md"), encoding: .utf8)
        var lines: [String] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock = line == "```json"; continue }
            if inBlock { lines.append(String(line)) }
        }
        return lines
    }

    @Test func everyExampleRoundTripsByteForByte() throws {
        let lines = try Self.exampleLines()
        #expect(lines.count >= 20)
        var types = Set<String>()
        for line in lines {
            let record = try RecordCoding.decode(Array(line.utf8))
            #expect(String(decoding: RecordCoding.encode(record), as: UTF8.self) == line + "\n")
            switch record {
            case .header: types.insert("header")
            case .open: types.insert("open")
            case .upgrade: types.insert("upgrade")
            case .frame(let f): types.insert(f.opcode == .close ? "close" : "frame")
            case .end: types.insert("end")
            case .fault: types.insert("fault")
            case .note: types.insert("note")
            case .tunnel: types.insert("tunnel")
            case .http: types.insert("http")
            }
        }
        #expect(types == Set(["header"] + RecordCoding.recordTypes))
    }
}
