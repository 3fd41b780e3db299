import Capture
import Testing

/// Grouping a rotated recording's parts given to `analyze`, and reading them as one.
@Suite struct RecordingPartsTests {
    static func header(_ recording: String?, _ part: Int?) -> CaptureHeader {
        CaptureHeader(tool: "t", startedAt: 1, source: "proxy", recording: recording, part: part)
    }

    @Test func partsOfOneRecordingBecomeOneGroupInPartOrder() {
        let headers: [CaptureHeader?] = [Self.header("r", 2), Self.header(nil, nil), Self.header("r", 1), nil, Self.header("r", 3)]
        let names = ["p2", "single", "p1", "-", "p3"]
        let (groups, warnings) = RecordingParts.group(headers, names: names)
        #expect(groups.map(\.inputs) == [[2, 0, 4], [1], [3]])
        #expect(groups[0].recording == "r")
        #expect(warnings.isEmpty)
    }

    @Test func missingAndRepeatedPartsAreWarnedAbout() {
        let headers: [CaptureHeader?] = [Self.header("r", 2), Self.header("r", 5), Self.header("r", 2), Self.header("s", 1)]
        let (groups, warnings) = RecordingParts.group(headers, names: ["a.0002", "a.0005", "copy.0002", "b.0001"])
        #expect(groups.map(\.inputs) == [[0, 1], [3]])
        #expect(warnings.count == 3, "\(warnings)")
        #expect(warnings.contains { $0.contains("copy.0002") && $0.contains("again") })
        #expect(warnings.contains { $0.contains("part 1 is missing (before a.0002)") })
        #expect(warnings.contains { $0.contains("parts 3 to 4 are missing (between a.0002 and a.0005)") })
    }

    /// An in-memory source for chaining.
    struct ListSource: RecordSource {
        var header: CaptureHeader
        var records: [CaptureRecord]
        var warnings: [String]
        mutating func next() throws -> CaptureRecord? { records.isEmpty ? nil : records.removeFirst() }
    }

    @Test func chainedSourceReadsPartsOneAfterTheOther() throws {
        let open = { (t: Int64) in CaptureRecord.open(OpenRecord(conn: Int(t), t: t, client: "c:1", server: "s:1")) }
        let parts: [String: ListSource] = [
            "b": ListSource(header: Self.header("r", 2), records: [open(3)], warnings: ["torn"]),
            "c": ListSource(header: Self.header("r", 3), records: [], warnings: []),
            "d": ListSource(header: Self.header("r", 4), records: [open(4), open(5)], warnings: []),
        ]
        var opened: [String] = []
        var chain = ChainedRecordSource(names: ["a", "b", "c", "d"],
                                        first: ListSource(header: Self.header("r", 1), records: [open(1), open(2)], warnings: [])) {
            opened.append($0)
            return parts[$0]!
        }
        var read: [CaptureRecord] = []
        while let record = try chain.next() {
            read.append(record)
            // Parts are opened only when needed.
            if read.count == 2 { #expect(opened.isEmpty) }
        }
        #expect(read == [open(1), open(2), open(3), open(4), open(5)])
        #expect(chain.header.part == 1)
        #expect(chain.warnings == ["b: torn"])
        #expect(opened == ["b", "c", "d"])
    }
}
