import Capture
import Replay
import Vocabulary
import WebSocket

extension FuzzTarget {
    /// A capture's lines, decoded, as replay loads them (grouping by the analyzer, the
    /// recorded-head check), then each connection's script played in both roles against a
    /// silent peer on a fake clock: at `--speed max` with every wait capped at 1 ms, the
    /// script must finish within a bounded number of wake-ups, and every HTTP head it
    /// writes must hold no control character but its CR LF line ends.
    static let replayScript = FuzzTarget(
        name: "replay-script",
        summary: "capture lines through ReplayLoader, then ReplayScript in both roles on a fake clock") { input in
        var records: [CaptureRecord] = []
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
            if let record = try? RecordCoding.decode(Array(line)) { records.append(record) }
        }
        guard let recordings = try? ReplayLoader.load({ RecordList(records) }, selection: .allClients) else { return }
        let timing = ReplayTiming(speed: nil, maxGap: 1_000, patience: 1_000)
        let wire = ReplayProtocol.detect(in: recordings)
        for recording in recordings {
            for role in [Side.server, .client] {
                var config = ReplayScript.Config(role: role, wire: wire, timing: timing)
                config.connectTimeout = 1_000
                var script = ReplayScript(recording, config: config)
                var now: Micros = 0
                var actions = script.handle(role == .client ? .connected : .request(Self.liveRequest), now: now)
                // Each wake-up resolves a step, a peer frame or the end: a bound past their number.
                let bound = 4 * (recording.frames.count + 4)
                var wakeUps = 0
                while !script.isFinished {
                    checkHeads(actions)
                    guard wakeUps < bound else { fatalError("invariant broken: replay script not finished after \(bound) wake-ups") }
                    wakeUps += 1
                    let next = actions.compactMap { if case .schedule(let at) = $0 { at } else { nil } }.max() ?? now + 1_000
                    require(next >= now, "a wake-up scheduled in the past: \(next) < \(now)")
                    require(next - now <= 10_000, "a wait of \(next - now) us with every wait capped at 1 ms")
                    now = next
                    actions = script.handle(.timer, now: now)
                }
                checkHeads(actions)
            }
        }
    }

    static let liveRequest = WebSocketHandshake.request(host: "127.0.0.1:9", target: "/", key: "dGhlIHNhbXBsZSBub25jZQ==")

    /// No control character in a written head but CR LF pairs.
    static func checkHeads(_ actions: [ReplayAction]) {
        for case .write(let bytes) in actions {
            for (i, byte) in bytes.enumerated() where byte < 32 || byte == 127 {
                let lineEnd = (byte == 13 && i + 1 < bytes.count && bytes[i + 1] == 10) || (byte == 10 && i > 0 && bytes[i - 1] == 13)
                require(lineEnd || byte == 9, "control byte \(byte) at \(i) of a written head")
            }
        }
    }
}

/// Records already decoded, as a record source.
struct RecordList: RecordSource {
    var records: [CaptureRecord]
    var index = 0
    init(_ records: [CaptureRecord]) { self.records = records }
    var header: CaptureHeader { CaptureHeader(tool: "faultline fuzz", startedAt: 0, source: "proxy") }
    var warnings: [String] { [] }
    mutating func next() throws -> CaptureRecord? {
        guard index < records.count else { return nil }
        defer { index += 1 }
        return records[index]
    }
}
