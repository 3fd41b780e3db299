/// One copy of each text a report's logs keep many times over: the causes of transitions
/// and the ends of connections repeat for every client ("close 1000 from client", "RST from
/// server"), and a text longer than 15 bytes is a heap allocation of its own each time it
/// is made. At 2,000 clients with their logs full (a long capture), some 100,000 such
/// copies were kept; shared, they are a few dozen.
///
/// Bounded at `capacity` texts. Unique texts (a handshake's socket id) come too, and first:
/// every client's handshake precedes its first close, so a pool that kept the first texts
/// it met was full of socket ids before any close was seen, and held no close at all (4.2
/// MB of copies at 1 GB of input). So a full pool makes room by forgetting the texts met
/// only once; when that frees less than a quarter of it, the texts held repeat and the pool
/// stops taking new ones.
struct StringPool: Sendable {
    /// Each text held, and whether it was met again after it was first held.
    private var texts: [String: Bool] = [:]
    /// No room could be made: texts not held already come back as they are.
    private var closed = false
    let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// `text`, or the equal text already held (sharing its storage).
    mutating func shared(_ text: String) -> String {
        // Up to 15 bytes a string is stored inline: nothing to share.
        guard text.utf8.count > 15 else { return text }
        if let i = texts.index(forKey: text) {
            if !texts.values[i] { texts.values[i] = true }
            return texts.keys[i]
        }
        if texts.count >= capacity { makeRoom() }
        if texts.count < capacity { texts[text] = false }
        return text
    }

    mutating func shared(_ text: String?) -> String? { text.map { shared($0) } }

    /// Forgets the texts met once (their copies stay with the entries that hold them).
    private mutating func makeRoom() {
        guard !closed else { return }
        texts = texts.filter { $0.value }
        if texts.count > capacity - capacity / 4 { closed = true }
    }

    /// How many distinct texts are held (for tests).
    var count: Int { texts.count }
}
