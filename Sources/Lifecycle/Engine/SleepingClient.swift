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
/// its inputs so far, opens and frames in a compact byte form (`SleepingRecordBytes`: a
/// one-frame connection's two records take about 55 bytes, where its timeline is some
/// 2.6 KB), the rarer records as their capture lines (`RecordCoding`).
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
        case record = 0x52       // "R": an upgrade, end or fault line follows
        case open = 0x4F         // "O": an open record in `SleepingRecordBytes`
        case frame = 0x46        // "F": a frame in `SleepingRecordBytes`, no event, not decoded by the relay
        case frameWithDecoding = 0x47  // "G": the same, its decoding next in `decodings`
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
            case .open(let open):
                bytes.append(Tag.open.rawValue)
                SleepingRecordBytes.encode(open, into: &bytes)
                continue
            case .frame(let frame, let event):
                if event == nil, case .notDecoded = frame.decoded {
                    bytes.append(Tag.frame.rawValue)
                } else {
                    bytes.append(Tag.frameWithDecoding.rawValue)
                    decodings.append(FrameDecoding(event: event, decoded: frame.decoded))
                }
                SleepingRecordBytes.encode(frame, into: &bytes)
                continue
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
        // Kept at its size: the array grew by doubling, and a million sleepers keep theirs.
        self.bytes = [UInt8](unsafeUninitializedCapacity: bytes.count) { room, count in
            count = room.initialize(fromContentsOf: bytes)
        }
        self.decodings = decodings
    }

    /// The inputs it was put to sleep with, in order.
    var inputs: [ClientInput] {
        var inputs: [ClientInput] = []
        var decodingsTaken = 0
        var i = bytes.startIndex
        while i < bytes.endIndex, let tag = Tag(rawValue: bytes[i]) {
            i += 1
            // Every input came back whole when the client was put to sleep (`init`), so
            // none fails here; one that did would end the list.
            switch tag {
            case .advance:
                guard i + 8 <= bytes.endIndex else { return inputs }
                var time: Micros = 0
                withUnsafeMutableBytes(of: &time) { $0.copyBytes(from: bytes[i..<i + 8]) }
                inputs.append(.advance(Micros(littleEndian: time)))
                i += 8
            case .open:
                guard let open = SleepingRecordBytes.open(bytes, at: &i) else { return inputs }
                inputs.append(.open(open))
            case .frame, .frameWithDecoding:
                guard var frame = SleepingRecordBytes.frame(bytes, at: &i) else { return inputs }
                var event: RealtimeEvent?
                if tag == .frameWithDecoding, decodingsTaken < decodings.count {
                    event = decodings[decodingsTaken].event
                    frame.decoded = decodings[decodingsTaken].decoded
                    decodingsTaken += 1
                }
                inputs.append(.frame(frame, event))
            case .record:
                let end = bytes[i...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
                let record = Self.decode(bytes[i..<end])
                i = min(end + 1, bytes.endIndex)
                switch record {
                case .upgrade(let r): inputs.append(.upgrade(r))
                case .end(let r): inputs.append(.end(r))
                case .fault(let r): inputs.append(.fault(r))
                default: return inputs
                }
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
