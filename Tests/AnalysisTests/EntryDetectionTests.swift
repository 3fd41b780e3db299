import Capture
import Testing
import Vocabulary
import WebSocket
@testable import Analysis

/// `analyze` without `--spec`: the entry (and so the spec) chosen from the first upgrade
/// request and messages, the reason said, and the records read ahead handed on unchanged.
@Suite struct EntryDetectionTests {
    struct ListSource: RecordSource {
        var header = CaptureHeader(tool: "t", startedAt: 1, source: "proxy")
        var records: [CaptureRecord]
        var warnings: [String] = []
        mutating func next() throws -> CaptureRecord? { records.isEmpty ? nil : records.removeFirst() }
    }

    @Test func thePusherURLChoosesBirdOnTheFirstUpgrade() {
        // A client connecting as Bird's clients do: TCP open, then its upgrade request.
        let records: [CaptureRecord] = [
            .open(OpenRecord(conn: 1, t: 0, client: "10.0.0.1:40001", server: "127.0.0.1:8080")),
            .upgrade(UpgradeRecord(conn: 1, t: 1000, from: .client, method: "GET",
                                   target: "/app/key?protocol=7&client=js&version=1.0", headers: [HeaderField("User-Agent", "sim/1.0")])),
            .upgrade(UpgradeRecord(conn: 1, t: 2000, from: .server, status: 101, headers: [])),
        ]
        var detection = EntryDetection()
        var offered = 0
        for record in records where !detection.decided {
            detection.offer(record)
            offered += 1
        }
        #expect(offered == 2, "open, then the upgrade request decides")
        #expect(detection.choice?.key == "bird" && detection.specName == "bird")
        #expect(detection.line == "spec bird: protocol bird chosen on conn 1: the upgrade's path /app/KEY?protocol= "
                + "is the Pusher protocol's URL; --spec overrides")
    }

    @Test func aMessageChoosesWhenTheUpgradeSaysNothing() {
        var detection = EntryDetection()
        detection.offer(.upgrade(UpgradeRecord(conn: 4, t: 0, from: .client, method: "GET", target: "/ws", headers: [])))
        #expect(!detection.decided)
        detection.offer(.frame(FrameRecord(conn: 4, t: 1, from: .server, opcode: .text, masked: false,
                                           payload: Array(#"{"event":"acme:connection_established","data":"{}"}"#.utf8))))
        #expect(detection.line.hasPrefix("spec bird: protocol bird chosen on conn 4: a message is the Pusher-protocol event acme:"))
    }

    @Test func nothingRecognizedKeepsTheFallbackAndSaysSo() throws {
        let plain = (1...20).map { i in
            CaptureRecord.frame(FrameRecord(conn: 1, t: Micros(i), from: .server, opcode: .text, masked: false,
                                            payload: Array("hello \(i)".utf8)))
        }
        var detection = EntryDetection()
        var source = try ReadAheadSource(ListSource(records: plain), detecting: &detection)
        #expect(detection.decided && detection.choice == nil && detection.specName == "bird")
        #expect(detection.line.hasPrefix("spec bird (the default): no entry of the protocol table recognized"))
        var handedOn: [CaptureRecord] = []
        while let record = try source.next() { handedOn.append(record) }
        #expect(handedOn == plain, "the records read ahead come first, then the rest, in order, once")
    }

    @Test func detectionIsBoundedByItsRecordLimit() throws {
        let opens = (1...(EntryDetection.recordLimit + 10)).map { i in
            CaptureRecord.open(OpenRecord(conn: i, t: Micros(i), client: "c:1", server: "s:1"))
        }
        var detection = EntryDetection()
        var source = try ReadAheadSource(ListSource(records: opens), detecting: &detection)
        #expect(detection.decided && detection.choice == nil)
        var count = 0
        while try source.next() != nil { count += 1 }
        #expect(count == opens.count)
    }

    /// A source whose decoding runs on worker threads, with its bin for spent payloads.
    struct BinnedSource: RecordSource {
        var header = CaptureHeader(tool: "t", startedAt: 1, source: "proxy")
        var warnings: [String] = []
        let spentPayloads: SpentPayloads?
        mutating func next() throws -> CaptureRecord? { nil }
    }

    @Test func readingAheadKeepsTheBinForSpentPayloads() throws {
        let bin = SpentPayloads()
        var detection = EntryDetection()
        let binned = try ReadAheadSource(BinnedSource(spentPayloads: bin), detecting: &detection)
        #expect(binned.spentPayloads === bin, "the analysis hands payloads back to the decoder behind the read-ahead")
        var plainDetection = EntryDetection()
        let plain = try ReadAheadSource(ListSource(records: []), detecting: &plainDetection)
        #expect(plain.spentPayloads == nil, "a source that decodes on the caller's thread has no bin")
    }
}
