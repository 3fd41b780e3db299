@testable import Capture
import Foundation
import TestSupport
import Testing

/// The bin of frame payloads handed back from the analysis's shard workers to a capture's
/// decode workers (`SpentPayloads`): bounded, and decoding frees from it without changing
/// what it reads.
@Suite struct SpentPayloadsTests {
    static func payloads(_ count: Int) -> [[UInt8]] {
        (0..<count).map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 16 + $0) }
    }

    @Test func holdsAtMostItsLimitAndCountsWhatItRefused() {
        let bin = SpentPayloads(limit: 4)
        var given = Self.payloads(10)
        bin.give(&given)
        #expect(given.isEmpty)
        #expect(bin.count == 4)
        #expect(bin.refused == 6)
        var more = Self.payloads(3)
        bin.give(&more)
        #expect(more.isEmpty)
        #expect(bin.count == 4)
        #expect(bin.refused == 9)
    }

    @Test func takeMovesOutAtMostWhatItHolds() {
        let bin = SpentPayloads(limit: 100)
        var given = Self.payloads(5)
        bin.give(&given)
        var taken: [[UInt8]] = []
        bin.take(upTo: 3, into: &taken)
        #expect(taken.count == 3)
        #expect(bin.count == 2)
        bin.take(upTo: 10, into: &taken)
        #expect(taken.count == 5)
        #expect(bin.count == 0)
        bin.take(upTo: 10, into: &taken)
        #expect(taken.count == 5)
    }

    @Test func aZeroLimitHoldsNothing() {
        let bin = SpentPayloads(limit: 0)
        var given = Self.payloads(3)
        bin.give(&given)
        #expect(bin.count == 0)
        #expect(bin.refused == 3)
    }

    /// Decode workers free the bin's payloads as they decode (one per record), and read
    /// exactly what one thread reads.
    @Test func decodingOnSeveralThreadsFreesThemAndReadsTheSame() throws {
        for url in DirectDecoderTests.sampleCaptures {
            let serial = try ChunkedDecodingTests.read(url.path, jobs: 1)
            var reader = try CaptureReader(path: url.path, decodeJobs: 2, decodeRunBytes: 300)
            let bin = try #require(reader.spentPayloads)
            var given = Self.payloads(serial.records.count + 50)
            bin.give(&given)
            var records: [CaptureRecord] = []
            var lines: [Int] = []
            while let record = try reader.nextRecord() {
                records.append(record)
                lines.append(reader.lineNumber)
            }
            #expect(records == serial.records, "\(url.lastPathComponent)")
            #expect(lines == serial.lines, "\(url.lastPathComponent)")
            #expect(reader.warnings == serial.warnings, "\(url.lastPathComponent)")
            // Each run takes some (and frees what it did not need at its end).
            if !serial.records.isEmpty { #expect(bin.count < serial.records.count + 50, "\(url.lastPathComponent)") }
        }
    }

    @Test func oneThreadHasNoBin() throws {
        let path = try #require(DirectDecoderTests.sampleCaptures.first).path
        #expect(try CaptureReader(path: path).spentPayloads == nil)
        #expect(try CaptureReader(path: path, decodeJobs: 2).spentPayloads != nil)
    }
}
