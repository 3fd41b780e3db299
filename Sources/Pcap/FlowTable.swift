import CPcap

/// What `FlowTable` holds: an object that knows its own key.
protocol FlowTableEntry: AnyObject {
    var key: FlowKey { get }
}

/// The flows of a pcap being decoded, by their addresses and ports: looked up once per packet.
///
/// Open addressing with linear probing in one block of 16-byte slots (a 64-bit hash and the
/// flow, which holds its own key), so a lookup touches one slot line and then the flow it
/// was going to use anyway. `Dictionary` kept metadata, keys and values in three arrays and
/// ran a SipHash per packet: with thousands of connections open those were three cold cache
/// lines and a few percent of all instructions. Keys are hashed with a seed drawn per table,
/// so a crafted capture cannot aim its flows at one run of slots.
///
/// The slots are one manually managed allocation owned by this non-copyable table: an
/// `Array` retained and released its buffer around every closure-based access, which the
/// prefetching of `PacketBatch` needs once per packet.
struct FlowTable<Flow: FlowTableEntry>: ~Copyable {
    private struct Slot {
        var hash: UInt64
        var flow: Flow?
    }

    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    private let seed: UInt64
    private(set) var count = 0

    private static var initialCapacity: Int { 64 }
    private static var flowOffset: Int { MemoryLayout<Slot>.offset(of: \Slot.flow)! }

    init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
        slots = Self.emptySlots(Self.initialCapacity)
        mask = Self.initialCapacity - 1
        self.seed = seed
    }

    deinit {
        slots.deinitialize(count: mask + 1)
        slots.deallocate()
    }

    private static func emptySlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(hash: 0, flow: nil), count: capacity)
        return slots
    }

    @inline(__always) private func hash(_ key: FlowKey) -> UInt64 {
        @inline(__always) func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
            let m = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            return m ^ (m >> 29)
        }
        var h = mix(seed, key.low.address.high)
        h = mix(h, key.low.address.low)
        h = mix(h, key.high.address.high)
        h = mix(h, key.high.address.low)
        h = mix(h, UInt64(key.low.port) << 16 | UInt64(key.high.port) | (key.low.address.isIPv6 ? 1 << 32 : 0))
        // The index comes from the low bits: mix the high bits down once more.
        h = (h ^ (h >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return h ^ (h >> 32)
    }

    /// `key` with its hash in this table, for `prefetchSlot(for:)` and the lookup both.
    @inline(__always) func probe(_ key: FlowKey) -> FlowProbe { FlowProbe(key: key, hash: hash(key)) }

    subscript(key: FlowKey) -> Flow? { self[probe(key)] }

    subscript(probe: FlowProbe) -> Flow? {
        var index = Int(truncatingIfNeeded: probe.hash) & mask
        while let flow = slots[index].flow {
            if slots[index].hash == probe.hash, flow.key == probe.key { return flow }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Starts loading the slot where `probe`'s run begins (see `PacketBatch`); returns the
    /// slot's index for `prefetchFlow(atSlot:)`.
    @inline(__always) func prefetchSlot(for probe: FlowProbe) -> Int {
        let index = Int(truncatingIfNeeded: probe.hash) & mask
        CPcap_prefetch(slots + index)
        return index
    }

    /// Starts loading the object of the flow in slot `index` (the first of the probe run,
    /// which is nearly always the one), without retaining it.
    @inline(__always) func prefetchFlow(atSlot index: Int) {
        // The table may have been emptied since the slot was named: only a hint. The
        // reference is read as a plain address: taking it as a reference would retain the
        // object, a write to the very cache line being prefetched.
        guard index <= mask else { return }
        let address = UnsafeRawPointer(slots + index).load(fromByteOffset: Self.flowOffset, as: UnsafeRawPointer?.self)
        if let address { CPcap_prefetch(address) }
    }

    /// Adds a flow whose key is not in the table.
    mutating func insert(_ flow: Flow) {
        if (count + 1) * 2 > mask + 1 { grow() }
        place(Slot(hash: hash(flow.key), flow: flow))
        count += 1
    }

    private mutating func place(_ slot: Slot) {
        var index = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[index].flow != nil { index = (index + 1) & mask }
        slots[index] = slot
    }

    /// Removes and returns the flow with `key`, closing the gap by shifting later slots of
    /// the same probe run back (no tombstones, so lookups never slow down with churn).
    @discardableResult
    mutating func removeValue(forKey key: FlowKey) -> Flow? {
        let h = hash(key)
        var index = Int(truncatingIfNeeded: h) & mask
        while let flow = slots[index].flow {
            if slots[index].hash == h, flow.key == key {
                slots[index].flow = nil
                count -= 1
                var hole = index
                var next = (index + 1) & mask
                while slots[next].flow != nil {
                    let home = Int(truncatingIfNeeded: slots[next].hash) & mask
                    // Move `next` into the hole unless its home lies cyclically in (hole, next].
                    if (next - home) & mask >= (next - hole) & mask {
                        slots[hole] = slots[next]
                        slots[next].flow = nil
                        hole = next
                    }
                    next = (next + 1) & mask
                }
                return flow
            }
            index = (index + 1) & mask
        }
        return nil
    }

    var values: [Flow] { (0...mask).compactMap { slots[$0].flow } }

    mutating func removeAll() {
        slots.deinitialize(count: mask + 1)
        slots.deallocate()
        slots = Self.emptySlots(Self.initialCapacity)
        mask = Self.initialCapacity - 1
        count = 0
    }

    private mutating func grow() {
        let old = slots, oldCapacity = mask + 1
        slots = Self.emptySlots(oldCapacity * 2)
        mask = oldCapacity * 2 - 1
        for index in 0..<oldCapacity where old[index].flow != nil { place(old[index]) }
        old.deinitialize(count: oldCapacity)
        old.deallocate()
    }
}

/// A flow key with its hash in one `FlowTable`, computed once per packet for the batch's
/// prefetch and the lookup both. Valid for that table's life: its seed never changes.
struct FlowProbe {
    let key: FlowKey
    let hash: UInt64
}
