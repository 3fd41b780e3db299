import Capture
@testable import Pcap
import Vocabulary

/// Records what a reassembler delivers, for assertions.
struct RecordingSink: TCPStreamSink {
    enum Event: Equatable {
        case data([UInt8])
        case gap(Int64, TCPGapReason)
        case conflict(offset: Int64, count: Int)
        case end(EndKind)
    }
    var events: [Event] = []

    mutating func streamData(_ bytes: UnsafeRawBufferPointer, t: Micros) {
        // Consecutive data events are merged: only the byte order matters.
        if case .data(let previous) = events.last {
            events[events.count - 1] = .data(previous + Array(bytes))
        } else {
            events.append(.data(Array(bytes)))
        }
    }
    mutating func streamGap(count: Int64, reason: TCPGapReason, t: Micros) { events.append(.gap(count, reason)) }
    mutating func streamConflict(offset: Int64, count: Int, t: Micros) { events.append(.conflict(offset: offset, count: count)) }
    mutating func streamEnd(_ kind: EndKind, t: Micros) { events.append(.end(kind)) }

    var bytes: [UInt8] {
        events.flatMap { event -> [UInt8] in
            if case .data(let d) = event { return d }
            return []
        }
    }
}

/// Drives one direction of a reassembler with segments built in code.
struct ReassemblyHarness: ~Copyable {
    var reassembler: TCPReassembler
    var sink = RecordingSink()
    var t: Micros = 0
    let a = Endpoint(IPAddress(ipv4: 0x0A00_0001), 40000)
    let b = Endpoint(IPAddress(ipv4: 0x0A00_0002), 80)

    init(limits: TCPReassembler.Limits = TCPReassembler.Limits()) {
        reassembler = TCPReassembler(limits: limits)
    }

    mutating func send(seq: UInt32, _ payload: [UInt8] = [], flags: TCPSegment.Flags = [.ack], missing: Int = 0) {
        t += 1
        payload.withUnsafeBytes { raw in
            let segment = TCPSegment(source: a, destination: b, seq: seq, ack: 0, flags: flags, payload: raw, missing: missing)
            reassembler.receive(segment, t: t, into: &sink)
        }
    }

    mutating func peerAck(_ ack: UInt32) {
        t += 1
        reassembler.peerAcknowledged(ack, t: t, into: &sink)
    }

    mutating func finish() { reassembler.finish(t: t, into: &sink) }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
