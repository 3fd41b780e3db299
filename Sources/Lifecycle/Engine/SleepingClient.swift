import Capture
import Protocols
import Vocabulary

/// One thing that happens to a client's timeline: a record of one of its connections
/// (a frame with its decoded event), or a sweep that reached its timer rules. The same
/// inputs in the same order make the same timeline, which is what lets a client be put to
/// sleep as its short list of inputs and rebuilt when it wakes (`SleepingClient`).
enum ClientInput: Sendable {
    case open(OpenRecord)
    case upgrade(UpgradeRecord)
    case frame(FrameRecord, RealtimeEvent?)
    case end(EndRecord)
    case fault(FaultRecord)
    case advance(Micros)
}

extension ClientTimeline {
    /// Hands the input to the record handler (or the timer check) it is for.
    mutating func take(_ input: ClientInput, into events: inout [AnalysisEvent]) {
        switch input {
        case .open(let record): open(record, into: &events)
        case .upgrade(let record): upgrade(record, into: &events)
        case .frame(let record, let event): frame(record, event: event, into: &events)
        case .end(let record): end(record, into: &events)
        case .fault(let record): fault(record, into: &events)
        case .advance(let time): advance(to: time, into: &events)
        }
    }
}

/// A client whose timeline was put away, kept as what it needs to be rebuilt: its info and
/// its inputs so far, the records as their capture lines (`RecordCoding`: a one-frame
/// connection's two records are about 200 bytes, where its timeline is some 2.6 KB).
/// Woken, it is a fresh timeline that takes the same inputs again, its events thrown away
/// (they were reported when the inputs first came): the timeline is a pure function of its
/// inputs, so the rebuilt one is the one put away, and a report cannot tell whether a
/// client slept. Only clients with a short story sleep (`ClientShard`).
struct SleepingClient: Sendable {
    let info: ClientInfo
    /// Whether the client was analyzed at connection level (`ClientTimeline.connectionLevel`).
    let connectionLevel: Bool
    /// Its timers can change nothing up to this record time (`ClientTimeline.wakeTime`):
    /// only a sweep beyond it, or a record of the client, wakes it.
    let wake: Micros
    /// The inputs, each a tag byte (`Tag`) and the record's line or the sweep's time.
    private let bytes: [UInt8]
    /// The decoded parts of the frames tagged `frameWithDecoding`, in order: a line holds
    /// the frame, not what the protocol entry made of it.
    private let decodings: [FrameDecoding]

    private enum Tag: UInt8 {
        case record = 0x52       // "R": an open, upgrade, end or fault line follows
        case frame = 0x46        // "F": a frame line, no event, not decoded by the relay
        case frameWithDecoding = 0x47  // "G": a frame line, its decoding next in `decodings`
        case advance = 0x41      // "A": a sweep's time, 8 bytes little-endian
    }

    private struct FrameDecoding: Sendable {
        var event: RealtimeEvent?
        var decoded: DecodedEvent
    }

    /// The client put to sleep; nil when one of its records would not come back from its
    /// line exactly (then it stays awake: sleeping must never change a report).
    init?(_ timeline: ClientTimeline, inputs: [ClientInput]) {
        var bytes: [UInt8] = []
        var decodings: [FrameDecoding] = []
        for input in inputs {
            let record: CaptureRecord
            switch input {
            case .advance(let time):
                bytes.append(Tag.advance.rawValue)
                withUnsafeBytes(of: time.littleEndian) { bytes.append(contentsOf: $0) }
                continue
            case .frame(let frame, let event):
                if event == nil, case .notDecoded = frame.decoded {
                    bytes.append(Tag.frame.rawValue)
                } else {
                    bytes.append(Tag.frameWithDecoding.rawValue)
                    decodings.append(FrameDecoding(event: event, decoded: frame.decoded))
                }
                var bare = frame
                bare.decoded = .notDecoded
                record = .frame(bare)
            case .open(let r): bytes.append(Tag.record.rawValue); record = .open(r)
            case .upgrade(let r): bytes.append(Tag.record.rawValue); record = .upgrade(r)
            case .end(let r): bytes.append(Tag.record.rawValue); record = .end(r)
            case .fault(let r): bytes.append(Tag.record.rawValue); record = .fault(r)
            }
            let start = bytes.count
            RecordCoding.encode(record, into: &bytes)
            guard bytes.last == UInt8(ascii: "\n"), Self.decode(bytes[start..<bytes.count - 1]) == record else { return nil }
        }
        self.info = timeline.info
        self.connectionLevel = timeline.connectionLevel
        self.wake = timeline.wakeTime
        self.bytes = bytes
        self.decodings = decodings
    }

    /// The inputs it was put to sleep with, in order.
    var inputs: [ClientInput] {
        var inputs: [ClientInput] = []
        var decodingsTaken = 0
        var i = bytes.startIndex
        while i < bytes.endIndex, let tag = Tag(rawValue: bytes[i]) {
            i += 1
            if tag == .advance {
                guard i + 8 <= bytes.endIndex else { break }
                var time: Micros = 0
                withUnsafeMutableBytes(of: &time) { $0.copyBytes(from: bytes[i..<i + 8]) }
                inputs.append(.advance(Micros(littleEndian: time)))
                i += 8
                continue
            }
            let end = bytes[i...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            // Every line came back whole when the client was put to sleep (`init`), so
            // none fails here; a line that did would only be skipped.
            let record = Self.decode(bytes[i..<end])
            i = min(end + 1, bytes.endIndex)
            switch record {
            case .open(let r): inputs.append(.open(r))
            case .upgrade(let r): inputs.append(.upgrade(r))
            case .end(let r): inputs.append(.end(r))
            case .fault(let r): inputs.append(.fault(r))
            case .frame(var r):
                var event: RealtimeEvent?
                if tag == .frameWithDecoding, decodingsTaken < decodings.count {
                    event = decodings[decodingsTaken].event
                    r.decoded = decodings[decodingsTaken].decoded
                    decodingsTaken += 1
                }
                inputs.append(.frame(r, event))
            default:
                break
            }
        }
        return inputs
    }

    /// One line, newline excluded: the reader's fast decoder, else the full one.
    private static func decode(_ line: ArraySlice<UInt8>) -> CaptureRecord? {
        if let record = line.withUnsafeBufferPointer({ RecordCoding.decodeDirectly($0) }) { return record }
        return try? RecordCoding.decode(line)
    }
}
