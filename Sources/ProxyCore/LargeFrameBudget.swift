import Synchronization

/// Bytes of large frames gathered whole, shared by every connection of a proxy. A frame
/// over `RelayConfig.passThroughAbove` is relayed as it arrives unless an armed fault needs
/// its whole payload (to drop, rewrite, delay or split it); only then is it gathered, within
/// this budget. When the budget is used up, the frame is relayed as it comes and a note says
/// the fault could not act on it, so memory stays bounded by the budget, not by
/// `--max-payload` times the connections.
public final class LargeFrameBudget: Sendable {
    public static let defaultBytes = 64 << 20

    public let limit: Int
    private let used = Mutex(0)

    public init(bytes: Int = LargeFrameBudget.defaultBytes) {
        limit = max(0, bytes)
    }

    /// Bytes reserved now, by all connections.
    public var inUse: Int { used.withLock { $0 } }

    /// Takes `bytes` from the budget if they fit; the reservation gives them back when it is
    /// released (or dropped with its connection).
    func reserve(_ bytes: Int) -> Reservation? {
        let granted = used.withLock { used -> Bool in
            guard bytes >= 0, bytes <= limit - used else { return false }
            used += bytes
            return true
        }
        return granted ? Reservation(budget: self, bytes: bytes) : nil
    }

    fileprivate func giveBack(_ bytes: Int) {
        used.withLock { $0 -= bytes }
    }

    /// Bytes held for one frame being gathered; returned to the budget when this goes away
    /// (the frame was relayed, or the connection's session was dropped).
    final class Reservation {
        let budget: LargeFrameBudget
        let bytes: Int

        fileprivate init(budget: LargeFrameBudget, bytes: Int) {
            self.budget = budget
            self.bytes = bytes
        }

        deinit { budget.giveBack(bytes) }
    }
}
