import Capture
import Vocabulary
import WebSocket

/// Which messages of a connection an operator holds for a decision (`faultline proxy --ui`'s
/// intercept, `POST /intercept`): whole text and binary messages from `from` (both sides
/// when nil) whose payload contains `match` (any when nil). Control frames and fragmented
/// messages are never held, so pings, pongs and closes keep flowing.
public struct InterceptPause: Sendable, Hashable {
    public var from: Side?
    public var match: String?
    /// How long a message may stay held; then it is forwarded unchanged, so a forgotten
    /// pause delays a client but never hangs it.
    public var timeout: Micros

    public static let defaultTimeout: Micros = 60_000_000
    public static let timeoutRange: ClosedRange<Micros> = 1_000_000 ... 3_600_000_000

    public init(from: Side? = nil, match: String? = nil, timeout: Micros = InterceptPause.defaultTimeout) {
        self.from = from
        self.match = match.flatMap { $0.isEmpty ? nil : $0 }
        self.timeout = min(max(timeout, Self.timeoutRange.lowerBound), Self.timeoutRange.upperBound)
    }

    /// True for a message this pause holds.
    public func holds(from side: Side, opcode: Opcode, fin: Bool, payload: [UInt8]) -> Bool {
        guard fin, opcode == .text || opcode == .binary else { return false }
        if let from, from != side { return false }
        guard let match else { return true }
        return payload.firstRange(of: Array(match.utf8)) != nil
    }
}

/// What the operator decided for one held message.
public enum InterceptDecision: Sendable, Hashable {
    case forward
    /// Send this text (or bytes, for a binary message) instead of the original.
    case edit([UInt8])
    case drop
}

/// One connection's held messages, pure: in arrival order, each with its own id, bounded in
/// count and bytes. A message that does not fit is not held (the caller forwards it and
/// records why), and each one is due back at `deadline`.
public struct InterceptQueue: Sendable {
    public struct Held: Sendable, Hashable {
        public var id: Int
        public var frame: Frame
        /// The record as received (its payload inflated when it was compressed).
        public var record: FrameRecord
        public var heldAt: Micros
        public var deadline: Micros
    }

    public static let maxMessages = 100
    public static let maxBytes = 4 << 20

    public private(set) var held: [Held] = []
    public private(set) var heldBytes = 0
    /// Messages that matched a pause but found the queue full, so went on unheld.
    public private(set) var overflowed = 0
    private var nextID = 1

    public init() {}

    public var isEmpty: Bool { held.isEmpty }
    public var nextDeadline: Micros? { held.map(\.deadline).min() }

    /// Holds a message until `now + timeout`; its id, or nil when the queue is full.
    public mutating func hold(_ frame: Frame, record: FrameRecord, now: Micros, timeout: Micros) -> Int? {
        let size = frame.payload.count
        guard held.count < Self.maxMessages, size <= Self.maxBytes - heldBytes else {
            overflowed += 1
            return nil
        }
        let (deadline, overflow) = now.addingReportingOverflow(timeout)
        let id = nextID
        nextID += 1
        held.append(Held(id: id, frame: frame, record: record, heldAt: now, deadline: overflow ? .max : deadline))
        heldBytes += size
        return id
    }

    /// Takes message `id` out of the queue for its decision; nil if it is not held (any more).
    public mutating func take(_ id: Int) -> Held? {
        guard let index = held.firstIndex(where: { $0.id == id }) else { return nil }
        return remove(at: index)
    }

    /// Takes out every message whose deadline has come, oldest first.
    public mutating func takeExpired(now: Micros) -> [Held] {
        let due = held.filter { $0.deadline <= now }
        for message in due { _ = take(message.id) }
        return due
    }

    /// Takes out every message from `side` (it is closing: what it sent before goes first).
    public mutating func takeAll(from side: Side) -> [Held] {
        let from = held.filter { $0.record.from == side }
        for message in from { _ = take(message.id) }
        return from
    }

    private mutating func remove(at index: Int) -> Held {
        let message = held.remove(at: index)
        heldBytes -= message.frame.payload.count
        return message
    }
}
