import Capture
import ProtocolTable
import Protocols
import Testing
import Vocabulary
@testable import ProxyShell

/// `--live`'s frame lines on the traffic `Tools/bench/live-cost` measures: the lifecycle
/// frames of a Bird session get a line with their channel; the client events and pings
/// that are nearly all of a busy session get none (the view builds no text for them).
@Suite struct LiveViewFrameLineTests {
    /// A text frame as the relay records it: its event decoded once by the table's Bird entry.
    private func frame(_ json: String, from side: Side) -> CaptureRecord {
        var wire = ProtocolTable.standard.entry(for: "bird", prefix: "bird")
        let payload = Array(json.utf8)
        var record = FrameRecord(conn: 7, t: 1_500_000, from: side, opcode: .text, masked: side == .client, payload: payload)
        record.decoded = .decoded(protocolKey: type(of: wire).key, event: wire.decode(payload))
        return .frame(record)
    }

    @Test func lifecycleFramesShowTheirChannelAndClientEventsShowNothing() {
        var lines: [String] = []
        var view = LiveView(lifecycle: true, verbose: false)
        view.emit = { lines.append($0) }
        let session = [
            frame(#"{"event":"bird:subscribe","data":{"channel":"private-room-3","auth":"bench:00000001"}}"#, from: .client),
            frame(#"{"event":"bird_internal:subscription_succeeded","channel":"private-room-3","data":"{}"}"#, from: .server),
            frame(#"{"t":"0000000000000001","event":"client-message","channel":"private-room-3","data":"{\"id\":1}"}"#, from: .client),
            frame(#"{"t":"0000000000000001","event":"client-message","channel":"private-room-3","data":"{\"id\":1}"}"#, from: .server),
            frame(#"{"event":"bird:ping","data":{}}"#, from: .client),
            frame(#"{"event":"bird:unsubscribe","data":{"channel":"private-room-3"}}"#, from: .client),
        ]
        for record in session { view.show(record) }
        #expect(lines == [
            "+1.500000 conn 7 client bird:subscribe private-room-3",
            "+1.500000 conn 7 subscribed private-room-3",
            "+1.500000 conn 7 client bird:unsubscribe private-room-3",
        ])
    }

    @Test func aQuietViewShowsNoFrame() {
        var lines: [String] = []
        var view = LiveView(lifecycle: false, verbose: false)
        view.emit = { lines.append($0) }
        view.show(frame(#"{"event":"bird:subscribe","data":{"channel":"orders"}}"#, from: .client))
        #expect(lines.isEmpty)
        #expect(view.lifecycleLine(frame(#"{"event":"bird:subscribe","data":{"channel":"orders"}}"#, from: .client))
                    == "client bird:subscribe orders")
    }
}
