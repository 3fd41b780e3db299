/// Where each entry of a list stands, found by its string id: an open-addressing table of
/// the places alone, the ids being read where the list keeps them (`idAt`). A report of a
/// million clients looks each event's client up here; a `[String: Int]` kept a second copy
/// of every id and cost some 50 bytes a client, this table 16 at most.
struct PlaceIndex: Sendable {
    /// Place + 1 per slot, 0 for an empty slot; the count of slots is a power of two.
    private var slots: [Int] = []
    private var count = 0

    /// The place of `id`; nil when it has none.
    func place(of id: String, idAt: (Int) -> String) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var i = id.hashValue & mask
        while slots[i] != 0 {
            if idAt(slots[i] - 1) == id { return slots[i] - 1 }
            i = (i + 1) & mask
        }
        return nil
    }

    /// `id` stands at `place` now, in place of any earlier place of the same id.
    mutating func set(_ id: String, at place: Int, idAt: (Int) -> String) {
        if 2 * (count + 1) > slots.count { grow(idAt: idAt) }
        let mask = slots.count - 1
        var i = id.hashValue & mask
        while slots[i] != 0 {
            if idAt(slots[i] - 1) == id {
                slots[i] = place + 1
                return
            }
            i = (i + 1) & mask
        }
        slots[i] = place + 1
        count += 1
    }

    mutating func removeAll() {
        slots = []
        count = 0
    }

    /// Twice the slots (at least 16), every place put back.
    private mutating func grow(idAt: (Int) -> String) {
        let old = slots
        slots = Array(repeating: 0, count: max(16, old.count * 2))
        let mask = slots.count - 1
        for entry in old where entry != 0 {
            var i = idAt(entry - 1).hashValue & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = entry
        }
    }
}
