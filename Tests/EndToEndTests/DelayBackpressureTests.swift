import Capture
import Foundation
import Testing
import TestSupport

/// A latency fault in front of a flooding server (issue 15, item 11), against the real
/// binary: the proxy holds at most about 1 MiB back, then stops reading the server, so the
/// server's writes block (TCP flow control) and the proxy stays small. The sans-IO side of
/// it (pause past the bound, resume at half) is in `RelayHardeningTests`.
@Suite(.serialized) struct DelayBackpressureTests {
    /// The fault's delay is far longer than the test, so nothing held back is released to
    /// the client meanwhile: what stops the server is the latency queue alone, not the
    /// client, which never reads anyway.
    @Test func aLatencyFaultInFrontOfAFloodingServerStopsReadingIt() throws {
        let rig = try ProxyRig(server: ["--mode", "flood"], proxy: ["--fault", "latency:120s,dir=s2c"])
        let client = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/", "--mode", "hold"])
        defer { client.stop() }
        #expect(client.waitForLine(timeout: 20) { $0.contains("upgraded") } != nil, "the client never upgraded")
        // The flooding server says when its writes have made no progress for 3 s (or when
        // 500 MiB went out, which only an unbounded proxy would take).
        let flooded = try #require(rig.server.waitForLine(timeout: 120) { $0.contains("flooded") },
                                   "the server never stalled nor finished")
        let line = PeerLine(flooded)
        let pushed = line["pushed"]?.intValue ?? 0
        #expect(line["stalled"]?.boolValue == true, "the server pushed \(pushed) bytes without its writes blocking")
        // 1 MiB held back, one 1 MiB frame being gathered, and the kernel's socket buffers
        // on both ends of the loopback connection: a few MiB, far from 500.
        #expect(pushed < 64 << 20, "the server pushed \(pushed) bytes")
        let rss = try #require(ProxyRelayTests.residentKiB(pid: rig.proxy.pid))
        #expect(rss < 100 * 1024, "proxy RSS \(rss) KiB with \(pushed) bytes pushed at it")
        let capture = try rig.stopProxy()
        let notes = capture.records.compactMap { record -> String? in
            if case .note(let note) = record { note.message } else { nil }
        }
        let pause = notes.filter { $0.hasPrefix("latency queue from the server holds ") }
        #expect(pause.count == 1, "one note when the queue first passes its bound: \(notes)")
        #expect(pause.first?.contains("(over 1048576): not reading the server until it drains") == true, "\(pause)")
        // Nothing reached the client: no server frame was relayed, at once or delayed.
        let relayed = capture.frames.filter { frame in
            guard frame.from == .server, frame.opcode == .binary else { return false }
            if case .delayed = frame.action { return true }
            return frame.action == .forwarded
        }
        #expect(relayed.isEmpty, "\(relayed.count) server frames relayed within the fault's 120 s delay")
    }
}
