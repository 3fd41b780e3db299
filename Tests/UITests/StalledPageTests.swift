import Testing
import Foundation
import Glibc
import JSON
import Synchronization
import TestSupport
import Transport
import Vocabulary
import WebSocket
@testable import UI

/// A page that stops reading never makes the proxy buffer without bound or wait: on a real
/// loop and socket, records keep coming at full speed while the page reads nothing; its
/// queue stays within the limit and one update, updates are skipped and counted, and once
/// it reads again it is told how many it missed.
@Suite struct StalledPageTests {
    final class Flags: Sendable {
        let state = Mutex<(upgraded: Bool, done: Bool, skippedSeen: Int64?)>((false, false, nil))
    }

    @Test func aStalledPageIsSkippedNotBuffered() throws {
        let model = try Session.model()
        for r in Session.open(1, at: 0) { model.observe(r) }
        let loop = try EventLoop()
        let ui = try UIServer.start(loop: loop, host: "127.0.0.1", port: 0, token: nil, model: model, backend: nil)
        let port = Int(ui.address.split(separator: ":").last ?? "") ?? 0
        let flags = Flags()
        let release = Mutex(false)
        let client = Thread {
            defer { flags.state.withLock { $0.done = true } }
            guard let socket = try? RawSocket(port: port, receiveTimeout: 20) else { return }
            let head = "GET /live HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            socket.send(Array(head.utf8))
            guard String(decoding: socket.readHead(), as: UTF8.self).hasPrefix("HTTP/1.1 101") else { return }
            socket.send(FrameEncoder.encode(.text(#"{"type":"select","conn":1}"#, maskingKey: MaskingKey(1, 2, 3, 4))))
            flags.state.withLock { $0.upgraded = true }
            // Read nothing until the loop says the page was skipped.
            while !release.withLock({ $0 }) { usleep(10_000) }
            var decoder = FrameDecoder(maxPayload: 64 << 20)
            while true {
                let bytes = socket.readSome(1 << 16)
                if bytes.isEmpty { return }
                decoder.append(bytes)
                while let frame = try? decoder.next() {
                    if let message = try? JSONParser.parse(frame.payload), let skipped = message["skipped"]?.intValue, skipped > 0 {
                        flags.state.withLock { $0.skippedSeen = skipped }
                        return
                    }
                }
            }
        }
        client.start()
        var maxQueued = 0
        var skipped = 0
        var fed = 0
        let payload = String(repeating: "y", count: UIModel.payloadPrefix)
        let feeder = loop.scheduleRepeating(every: 1_000) {
            guard flags.state.withLock({ $0.upgraded }) else { return }
            // 50 full frames a millisecond: each update carries 200 of them (about 400 KB).
            for _ in 0..<50 {
                fed += 1
                model.observe(Session.text(1, at: Double(fed) / 1_000_000 + 1, from: .server, payload))
            }
            for state in ui.pageStates {
                maxQueued = max(maxQueued, state.queuedBytes)
                skipped = max(skipped, state.skipped)
            }
            if ui.pageStates.contains(where: { $0.skipped >= 3 }) { release.withLock { $0 = true } }
            if flags.state.withLock({ $0.done }) { loop.stop() }
        }
        let bound = loop.schedule(after: 30_000_000) { loop.stop() }
        loop.run()
        feeder.cancel()
        bound.cancel()
        ui.close()
        loop.close()
        let seen = flags.state.withLock { $0.skippedSeen }
        #expect(skipped >= 3, "the stalled page was never skipped (fed \(fed) records)")
        // At most one update (200 frames of 2 KiB, with JSON around them) beyond the limit.
        #expect(maxQueued <= UIServer.pageQueueLimit + 600_000, "queued \(maxQueued) bytes for a stalled page")
        #expect(seen.map { $0 >= 3 } == true, "the page was not told it missed updates: \(String(describing: seen))")
        #expect(fed > 10_000, "the records kept coming while the page stalled")
    }
}
