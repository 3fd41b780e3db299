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

/// After the close handshake: RFC 6455 (7.1.1) has the server end the TCP connection first
/// and the client wait for it. The proxy used to close both sockets with a FIN as soon as
/// both close frames had gone through, so a server that then reset its connection was, to
/// the client, a FIN. Now each peer's end is passed on as it comes, a FIN as a FIN and an
/// RST as an RST, and only peers that end nothing within `closeReplyTimeout` get the
/// proxy's own FIN.
extension RelaySession {
    mutating func closeHandshakeCompleted(into out: inout [RelayCommand]) {
        if client.readEnded && server.readEnded { return finish(into: &out) }
        phase = .closingTCP(deadline: clock + Self.closeReplyTimeout)
    }

    /// `side`'s TCP end after the close handshake, passed on to the other peer.
    mutating func passOnAfterCloseHandshake(_ side: Side, kind: EndKind, into out: inout [RelayCommand]) {
        if kind != .fin {
            abort(after: side, into: &out)
        } else if client.readEnded && server.readEnded {
            finish(into: &out)
        } else {
            shutdownSocket(side.other, into: &out)
        }
    }
}
