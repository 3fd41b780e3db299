import Capture
import Vocabulary
import WebSocket

/// Lines the live peer's frames up with the recorded ones, online. Each live frame is
/// compared with the first few unresolved recorded frames (a window of `window`): equal
/// to the first is a match; equal to a later one is a match in another order; of the same
/// kind as one of them is "different"; otherwise it is extra. Recorded frames are also
/// resolved by giving up on them (late, or the peer ended): those are missing.
struct PeerAligner: Sendable {
    static let window = 8

    enum Outcome: Sendable, Hashable {
        case otherOrder(FrameRecord, observed: Frame)
        case different(FrameRecord, observed: Frame, details: [String])
        case extra(Frame)
        case missing(FrameRecord)

        /// The deviation this outcome is; `name` gives a frame's event name for the report.
        func deviation(conn: ConnectionID, now: Micros, name: (Opcode, [UInt8]) -> String) -> Deviation {
            switch self {
            case .otherOrder(let record, let frame):
                return Deviation(kind: .otherOrder, conn: conn, t: now, expected: Deviation.summary(record),
                                 observed: Deviation.summary(frame), event: name(record.opcode, record.payload))
            case .different(let record, let frame, let details):
                return Deviation(kind: .different, conn: conn, t: now, expected: Deviation.summary(record),
                                 observed: Deviation.summary(frame), details: details, event: name(record.opcode, record.payload))
            case .extra(let frame):
                return Deviation(kind: .extra, conn: conn, t: now, observed: Deviation.summary(frame),
                                 event: name(frame.opcode, frame.payload))
            case .missing(let record):
                return Deviation(kind: .missing, conn: conn, t: now, expected: Deviation.summary(record),
                                 event: name(record.opcode, record.payload))
            }
        }
    }

    let expected: [FrameRecord]
    var matcher: FrameMatcher
    private var resolved: [Bool]
    /// Index of the first unresolved recorded frame.
    private(set) var resolvedPrefix = 0
    /// reachedAt[n - 1]: live time when the first n recorded frames were all resolved.
    private var reachedAt: [Micros] = []

    init(expected: [FrameRecord], matcher: FrameMatcher) {
        self.expected = expected
        self.matcher = matcher
        resolved = Array(repeating: false, count: expected.count)
    }

    func prefixReachedAt(_ count: Int) -> Micros? {
        count >= 1 && count <= reachedAt.count ? reachedAt[count - 1] : nil
    }

    mutating func observe(_ frame: Frame, now: Micros) -> [Outcome] {
        var candidates: [Int] = []
        var index = resolvedPrefix
        while index < expected.count, candidates.count < Self.window {
            if !resolved[index] { candidates.append(index) }
            index += 1
        }
        var firstDifferent: (index: Int, comparison: FrameMatcher.Comparison, details: [String])?
        for (position, candidate) in candidates.enumerated() {
            let comparison = matcher.compare(recorded: expected[candidate], observed: frame)
            switch comparison.verdict {
            case .same:
                matcher.commit(comparison)
                resolve(candidate, now: now)
                return position == 0 ? [] : [.otherOrder(expected[candidate], observed: frame)]
            case .different(let details):
                if firstDifferent == nil { firstDifferent = (candidate, comparison, details) }
            case .unrelated:
                continue
            }
        }
        if let different = firstDifferent {
            matcher.commit(different.comparison)
            resolve(different.index, now: now)
            return [.different(expected[different.index], observed: frame, details: different.details)]
        }
        return [.extra(frame)]
    }

    /// Gives up on recorded frame `index` (it did not come in time).
    mutating func giveUp(_ index: Int, now: Micros) -> [Outcome] {
        guard index < expected.count, !resolved[index] else { return [] }
        resolve(index, now: now)
        return [.missing(expected[index])]
    }

    /// The peer sent a close frame: it will send no more data, so every unresolved recorded
    /// frame before the recorded close (or every one, if the close was not recorded) is
    /// given up now instead of after the patience.
    mutating func peerClosed(now: Micros) -> [Outcome] {
        let close = expected.indices.first { !resolved[$0] && expected[$0].opcode == .close }
        let recordedClose = expected.indices.last { resolved[$0] && expected[$0].opcode == .close && $0 >= resolvedPrefix }
        let limit = recordedClose ?? close ?? expected.count
        var outcomes: [Outcome] = []
        for index in resolvedPrefix..<limit where !resolved[index] && expected[index].opcode != .close {
            outcomes += giveUp(index, now: now)
        }
        return outcomes
    }

    /// Gives up on every unresolved recorded frame (the peer ended).
    mutating func giveUpAll(now: Micros) -> [Outcome] {
        var outcomes: [Outcome] = []
        for index in resolvedPrefix..<expected.count where !resolved[index] {
            outcomes += giveUp(index, now: now)
        }
        return outcomes
    }

    private mutating func resolve(_ index: Int, now: Micros) {
        resolved[index] = true
        while resolvedPrefix < expected.count, resolved[resolvedPrefix] {
            resolvedPrefix += 1
            reachedAt.append(now)
        }
    }
}

