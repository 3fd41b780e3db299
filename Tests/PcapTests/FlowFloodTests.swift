import Capture
import Testing
import TestSupport
import WebSocket
@testable import Pcap

/// A flood of flows that never carry data (SYN-only scans) cannot blind the decoder to a
/// real session after them, and a cap that drops data ends the read with an error, not a
/// clean pass.
@Suite struct FlowFloodTests {
    func limits(flows: Int) -> PcapRecordSource.Limits {
        var limits = PcapRecordSource.Limits()
        limits.maxFlows = flows
        return limits
    }

    func synFlood(_ builder: PcapBuilder, count: Int, firstPort: UInt16 = 20000) {
        for i in 0..<count {
            Conversation(builder, clientPort: firstPort + UInt16(i)).send(fromClient: true, [], flags: [.syn])
        }
    }

    func session(_ builder: PcapBuilder, port: UInt16 = 50000) {
        let c = Conversation(builder, clientPort: port)
        c.handshake()
        c.upgrade()
        c.text(fromClient: false, #"{"event":"hello"}"#)
        c.send(fromClient: true, [], flags: [.ack, .fin])
        c.send(fromClient: false, [], flags: [.ack, .fin])
    }

    /// Every record, and the error the read ended with, if any.
    func read(_ builder: PcapBuilder, _ limits: PcapRecordSource.Limits) throws -> (records: [CaptureRecord], error: PcapError?, source: PcapRecordSource) {
        var source = try PcapRecordSource(path: try builder.write(), tool: "test", limits: limits)
        var records: [CaptureRecord] = []
        do {
            while let record = try source.next() { records.append(record) }
        } catch let error as PcapError {
            return (records, error, source)
        }
        return (records, nil, source)
    }

    @Test func aSYNFloodAheadOfASessionLeavesRoomForIt() throws {
        let b = PcapBuilder()
        synFlood(b, count: 101)
        session(b)
        let (records, error, source) = try read(b, limits(flows: 100))
        #expect(error == nil)
        #expect(records.contains { if case .open = $0 { true } else { false } })
        #expect(records.contains { if case .frame(let f) = $0 { f.payload == Array(#"{"event":"hello"}"#.utf8) } else { false } })
        // Flows without data hold at most half the table.
        #expect(source.trackedFlows <= 50)
    }

    @Test func flowsWithoutDataExpire() throws {
        let b = PcapBuilder()
        synFlood(b, count: 10)
        b.time += 120_000_000   // two minutes later
        let c = Conversation(b, clientPort: 50000)
        c.handshake()
        c.upgrade()
        // More than one decoding batch, so the capture has not ended (and every flow been
        // flushed) by the time the open record is read.
        for n in 0..<(2 * PacketBatch.capacity) { c.text(fromClient: false, "{\"event\":\"e\(n)\"}") }
        var source = try PcapRecordSource(path: try b.write(), tool: "test", limits: limits(flows: 100))
        guard case .open = try source.next() else { Issue.record("expected the session's open"); return }
        // The SYN-only flows went when the session's flow came: only it is left.
        #expect(source.trackedFlows == 1)
    }

    @Test func aCapThatDropsDataEndsTheReadWithAnError() throws {
        let b = PcapBuilder()
        // Two sessions that carry data and stay open, then a third: the table holds two.
        let open = (0..<3).map { Conversation(b, clientPort: 40000 + UInt16($0)) }
        for c in open {
            c.handshake()
            c.upgrade()
            c.text(fromClient: false, #"{"event":"hello"}"#)
        }
        let (records, error, _) = try read(b, limits(flows: 2))
        // The two that fit are decoded; the read then fails naming the cap.
        #expect(records.filter { if case .open = $0 { true } else { false } }.count == 2)
        let message = try #require(error?.message)
        #expect(message.contains("more than 2 TCP flows"))
        #expect(message.contains("carrying data"))
    }

    @Test func theConnectionCapDroppingDataEndsTheReadWithAnError() throws {
        let b = PcapBuilder()
        for i in 0..<3 {
            let c = Conversation(b, clientPort: UInt16(40000 + i))
            c.handshake()
            c.upgrade()
        }
        var limits = PcapRecordSource.Limits()
        limits.maxConnections = 2
        let (records, error, _) = try read(b, limits)
        #expect(records.filter { if case .open = $0 { true } else { false } }.count == 2)
        #expect(error?.message.contains("more than 2 WebSocket connections open at once") == true)
    }
}
