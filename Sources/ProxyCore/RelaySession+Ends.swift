import Capture
import Vocabulary

/// One direction of one TCP connection of the pair: who sent the FIN or RST (as that leg's
/// peer saw it), on which leg. Each is recorded at most once.
struct EndSlot: Hashable {
    var leg: Leg
    var side: Side
}

/// Recording every TCP end on both legs, as each peer saw it: the ends the peers send
/// (read from their sockets) and the ends the proxy sends them (a FIN passed on, the close
/// after a close handshake, a fault's drop or reset). A reader then knows when each peer
/// learned its connection was over, and how (a FIN or an RST).
extension RelaySession {
    /// Appends `record` unless its leg and side already have an end.
    mutating func recordEnd(_ record: EndRecord, into out: inout [RelayCommand]) {
        let slot = EndSlot(leg: record.leg ?? Leg(peer: record.side), side: record.side)
        guard !recordedEnds.contains(slot) else { return }
        recordedEnds.insert(slot)
        out.append(.record(.end(record)))
    }

    /// The end the proxy sends towards `side` (its FIN or RST on `side`'s leg), recorded as
    /// that peer sees it: from `side.other`. Nothing is recorded for a socket that is not
    /// there: an upstream never connected, or a peer whose connection already broke.
    mutating func recordProxyEnd(towards side: Side, kind: EndKind, detail: String? = nil, into out: inout [RelayCommand]) {
        guard !hardEnded.contains(side), side == .client || upstreamOpen else { return }
        recordEnd(EndRecord(conn: conn, t: clock, side: side.other, kind: kind,
                            detail: detail ?? "sent by the proxy to the \(side.rawValue)", leg: Leg(peer: side)),
                  into: &out)
    }

    /// Half-closes towards `side` (FIN, reading goes on), recording it.
    mutating func shutdownSocket(_ side: Side, into out: inout [RelayCommand]) {
        recordProxyEnd(towards: side, kind: .fin, detail: "passed on by the proxy to the \(side.rawValue)", into: &out)
        out.append(.shutdown(side))
    }
}
