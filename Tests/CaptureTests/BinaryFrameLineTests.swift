import Capture
import Foundation
import Testing
import Vocabulary

/// A binary frame's payload is written as the record's `b64` field through the one-pass
/// base64 encoder (Vocabulary's `Base64Text`): the line must carry standard base64 and
/// decode back to the same record.
@Suite struct BinaryFrameLineTests {
    @Test func binaryFrameRecordRoundTrips() throws {
        var rng = SeededGenerator(seed: 15)
        for length in [1, 2, 3, 16384, 16385] {
            var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            payload[0] = 0xFF  // never valid UTF-8, so recorded as b64
            let record = CaptureRecord.frame(FrameRecord(conn: 1, t: 2, from: .client, opcode: .binary, masked: true,
                                                         payload: payload))
            let line = RecordCoding.encode(record)
            let text = String(decoding: line, as: UTF8.self)
            #expect(text.contains("\"b64\":\"\(Data(payload).base64EncodedString())\""))
            #expect(try RecordCoding.decode(line.dropLast()) == record)
        }
    }
}
