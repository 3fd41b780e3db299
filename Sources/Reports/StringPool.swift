/// One copy of each text a report's logs keep many times over: the causes of transitions
/// and the ends of connections repeat for every client ("close 1000 from client", "RST from
/// server"), and a text longer than 15 bytes is a heap allocation of its own each time it
/// is made. At 2,000 clients with their logs full (a long capture), some 100,000 such
/// copies were kept; shared, they are a few dozen.
///
/// Bounded: once `capacity` distinct texts are held, new ones are kept as they come
/// (unique texts, such as a handshake's socket id, would otherwise fill it for nothing).
struct StringPool: Sendable {
    private var texts: Set<String> = []
    let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// `text`, or the equal text already held (sharing its storage).
    mutating func shared(_ text: String) -> String {
        // Up to 15 bytes a string is stored inline: nothing to share.
        guard text.utf8.count > 15 else { return text }
        if texts.count < capacity { return texts.insert(text).memberAfterInsert }
        return texts.firstIndex(of: text).map { texts[$0] } ?? text
    }

    mutating func shared(_ text: String?) -> String? { text.map { shared($0) } }

    /// How many distinct texts are held (for tests).
    var count: Int { texts.count }
}
