/// Chooses a connection's protocol table entry when no spec names one, as Wireshark
/// chooses a subdissector: first by the upgrade request (a subprotocol, path or query an
/// entry owns), else by the first few text messages (each entry's heuristic). Entries are
/// asked in table order and the first claim wins; each claim says why, so the choice can
/// be shown ("bird: the server's first message is bird:connection_established").
///
/// Pure and bounded: it looks at one upgrade request and at most `messageLimit` messages,
/// then gives up (`gaveUp`) and the caller keeps its default.
public struct ProtocolDetector: Sendable {
    /// An entry's claim that matched: its key and the reason it gave.
    public struct Choice: Sendable, Hashable {
        public var key: String
        public var reason: String

        public init(key: String, reason: String) {
            self.key = key
            self.reason = reason
        }
    }

    /// What one entry can claim by: its key and its two claim functions.
    public struct Claimant: Sendable {
        public var key: String
        public var upgrade: @Sendable (UpgradeEvidence) -> String?
        public var message: @Sendable ([UInt8]) -> String?

        public init(key: String, upgrade: @escaping @Sendable (UpgradeEvidence) -> String?,
                    message: @escaping @Sendable ([UInt8]) -> String?) {
            self.key = key
            self.upgrade = upgrade
            self.message = message
        }

        /// The claims of the entry `type`.
        public init<P: WireProtocol>(_ type: P.Type) {
            self.init(key: P.key, upgrade: { P.claim(upgrade: $0) }, message: { P.claim(message: $0) })
        }
    }

    /// Messages looked at before giving up: a protocol shows itself in its first few.
    public static let messageLimit = 8
    /// Larger messages are not offered to the heuristics (first messages are small).
    public static let maxMessageBytes = 64 * 1024

    public let claimants: [Claimant]
    public private(set) var choice: Choice?
    private var messagesSeen = 0

    public init(claimants: [Claimant]) {
        self.claimants = claimants
    }

    /// True once an entry was chosen or too many messages went by without a claim.
    public var decided: Bool { choice != nil || gaveUp }
    public var gaveUp: Bool { choice == nil && messagesSeen >= Self.messageLimit }

    /// Offers a client's upgrade request; returns the choice when it made one.
    @discardableResult
    public mutating func offer(upgrade: UpgradeEvidence) -> Choice? {
        guard !decided else { return choice }
        for claimant in claimants {
            if let reason = claimant.upgrade(upgrade) {
                choice = Choice(key: claimant.key, reason: reason)
                break
            }
        }
        return choice
    }

    /// Offers a complete text message (either direction); returns the choice when made.
    @discardableResult
    public mutating func offer(message payload: [UInt8]) -> Choice? {
        guard !decided else { return choice }
        messagesSeen += 1
        guard payload.count <= Self.maxMessageBytes else { return nil }
        for claimant in claimants {
            if let reason = claimant.message(payload) {
                choice = Choice(key: claimant.key, reason: reason)
                break
            }
        }
        return choice
    }
}
