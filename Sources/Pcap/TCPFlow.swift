/// One TCP connection's reassembly state: a reassembler per direction and what is known of
/// its end. The base class of `WebSocketConnection`, so that a packet's flow lookup, its
/// reassembly and its decoding all work in one object: as two objects, each packet paid
/// a cold cache miss on each when thousands of connections are open.
class TCPFlow: FlowTableEntry {
    let key: FlowKey
    /// One reassembler per direction (0: from the key's low endpoint), stored inline: an
    /// array of two kept them in a separate heap buffer, one more cold cache line a packet.
    @exclusivity(unchecked) var lowReassembler: TCPReassembler
    @exclusivity(unchecked) var highReassembler: TCPReassembler
    /// The connection is not WebSocket and its reassembly buffers were dropped.
    @exclusivity(unchecked) var released = false
    @exclusivity(unchecked) var lowFinSeen = false
    @exclusivity(unchecked) var highFinSeen = false
    /// A segment with payload was seen in either direction. Flows that never carry data
    /// (SYN-only scans, refused connections) are the ones `DecoderState` expires and
    /// evicts first, so they cannot take the table from flows that do.
    @exclusivity(unchecked) var carriedData = false

    init(key: FlowKey, limits: TCPReassembler.Limits) {
        self.key = key
        lowReassembler = TCPReassembler(limits: limits)
        highReassembler = TCPReassembler(limits: limits)
    }

    /// Direction `index`'s reassembler, in place: a read through a returned copy would
    /// retain and release its buffers.
    @inline(__always) final func withReassembler<R>(_ index: Int, _ body: (inout TCPReassembler) -> R) -> R {
        index == 0 ? body(&lowReassembler) : body(&highReassembler)
    }

    final func hasStarted(_ index: Int) -> Bool { withReassembler(index) { $0.hasStarted } }
    final func startedMidStream(_ index: Int) -> Bool { withReassembler(index) { $0.startedMidStream } }
    final func isEnded(_ index: Int) -> Bool { withReassembler(index) { $0.isEnded } }

    /// Drops the reassembly buffers of a connection that turned out not to be decoded.
    final func releaseReassembly(limits: TCPReassembler.Limits) {
        guard !released else { return }
        released = true
        lowReassembler = TCPReassembler(limits: limits)
        highReassembler = TCPReassembler(limits: limits)
    }

    /// Records a FIN (or, for RST, both directions' end); true once both directions ended.
    final func sawEnd(from index: Int, rst: Bool) -> Bool {
        if rst { lowFinSeen = true; highFinSeen = true } else if index == 0 { lowFinSeen = true } else { highFinSeen = true }
        return lowFinSeen && highFinSeen
    }
}
