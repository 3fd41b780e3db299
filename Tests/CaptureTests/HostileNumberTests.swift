@testable import Capture
import Foundation
import Testing
import Vocabulary

/// Integers in a capture line that once trapped the readers (issue 15, item 2), and the
/// time bound that keeps the analyzer's arithmetic on record times from overflowing.
@Suite struct CaptureHostileNumberTests {
    static let frame = #"{"type":"frame","conn":1,"t":T,"from":"server","op":1,"len":2,"text":"hi"}"#

    static func line(t: String) -> [UInt8] { Array(frame.replacingOccurrences(of: "T", with: t).utf8) }

    /// 19 digits overflowed the direct decoder's `value * 10 + digit` before its digit count
    /// was checked: `frames`, `analyze`, `export` and `replay` trapped on this line. The
    /// scanner now checks every step for overflow: beyond Int64 is "not sure" (the tree
    /// says why), within it the direct path reads what the tree reads.
    @Test func nineteenDigitIntegerDoesNotTrapTheDirectDecoder() {
        for t in ["9999999999999999999", "-9999999999999999999", "99999999999999999999999", "9223372036854775808"] {
            #expect(DirectDecoderTests.direct(Self.line(t: t)) == nil, "t = \(t)")
        }
        for t in ["999999999999999999", "1000000000000000000", "-4611686018427387903"] {
            #expect(DirectDecoderTests.agrees(Self.line(t: t)), "t = \(t)")
        }
        // Within Int64 but beyond the time bound: the tree's error.
        #expect(DirectDecoderTests.direct(Self.line(t: "9000000000000000000")) == nil)
    }

    @Test func outOfRangeIntegerIsAnErrorNamingTheKey() {
        #expect(throws: RecordDecodingError(#"key "t": 1e+19 is out of range (expected an integer from -9223372036854775808 to 9223372036854775807)"#)) {
            try RecordCoding.decode(Self.line(t: "9999999999999999999"))
        }
        // Within Int64 but beyond ±2^62 µs: refused too, so times minus times cannot overflow.
        #expect(throws: RecordDecodingError(#"key "t": 9000000000000000000 is out of range (expected microseconds within ±4611686018427387904)"#)) {
            try RecordCoding.decode(Self.line(t: "9000000000000000000"))
        }
        #expect(throws: RecordDecodingError.self) {
            try RecordCoding.decode(Array(#"{"type":"frame","conn":1,"t":5,"from":"server","op":1,"action":"delayed","delay_us":-1}"#.utf8))
        }
    }

    @Test func readerNamesTheLineOfAnOutOfRangeTime() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[1])
                                 + String(decoding: Self.line(t: "9999999999999999999"), as: UTF8.self) + "\n")
        #expect(throws: CaptureError.self) { try Fixtures.readAll(path) }
        do {
            _ = try Fixtures.readAll(path)
        } catch {
            #expect("\(error)".hasPrefix("\(path):3: key \"t\": 1e+19 is out of range"))
        }
    }

    @Test func saturatingArithmetic() {
        #expect(Int64.max.addingSaturated(1) == .max)
        #expect(Int64.min.addingSaturated(-1) == .min)
        #expect(Int64(5).addingSaturated(-7) == -2)
        #expect(Int64.min.subtractingSaturated(1) == .min)
        #expect(Int64.max.subtractingSaturated(-1) == .max)
        #expect(RecordTime.isValid(RecordTime.limit - 1) && !RecordTime.isValid(RecordTime.limit))
    }
}
