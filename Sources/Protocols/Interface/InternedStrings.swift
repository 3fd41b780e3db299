/// The strings a decoder reads from message after message (event names, channels), each
/// kept once with a value worked out from it (an event name's kind): the same bytes give
/// the same `String`, sharing one storage, instead of a new string per message.
///
/// A text message's event name longer than 15 bytes (`bird:connection_established`) was a
/// heap allocation per message, and classifying it (`BirdDecoder.kind(of:)`: prefix tests
/// and a `String` switch) cost about as much as finding it in the payload. Both happen
/// once per distinct name now; a message costs a hash of the name's bytes and one
/// comparison. Equal strings that share storage also compare at once where the rules
/// compare them.
///
/// Bounded: it keeps at most `limit` strings. Past that a string is made as before, for
/// every message, and nothing else changes: the table is a cache, never what decides an
/// event (the caller computes the same string and value on a miss).
///
/// Inlinable: the decoders live in other modules, and an unspecialized generic lookup
/// (metadata and witness calls per byte) cost more than the strings it saves.
public struct InternedStrings<Value: Sendable>: Sendable {
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var hash: UInt32
        @usableFromInline var bytes: [UInt8]
        @usableFromInline var text: String
        @usableFromInline var value: Value

        @inlinable
        init(hash: UInt32, bytes: [UInt8], text: String, value: Value) {
            self.hash = hash
            self.bytes = bytes
            self.text = text
            self.value = value
        }
    }

    /// Open addressing, linear probing, a power of two at most half full.
    @usableFromInline var slots: [Entry?]
    @usableFromInline var count = 0
    /// How many strings it keeps at most.
    public let limit: Int

    /// `limit` strings at most (at least one); the slots (twice as many) are allocated on
    /// the first insertion, so a decoder that never sees a message costs nothing.
    @inlinable
    public init(limit: Int) {
        self.limit = max(1, limit)
        self.slots = []
    }

    /// The string and value kept for `bytes`, if any.
    @inlinable
    public func lookUp(_ bytes: UnsafeBufferPointer<UInt8>) -> (text: String, value: Value)? {
        guard !slots.isEmpty else { return nil }
        let hash = Self.hash(bytes)
        let mask = slots.count - 1
        var i = Int(hash) & mask
        while let entry = slots[i] {
            if entry.hash == hash, Self.equal(entry.bytes, bytes) { return (entry.text, entry.value) }
            i = (i + 1) & mask
        }
        return nil
    }

    /// Keeps `text` and `value` for `bytes` (which must be absent: `lookUp` said nil),
    /// unless the table holds `limit` strings already.
    @inlinable
    public mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>, text: String, value: Value) {
        guard count < limit else { return }
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.slotCount(for: limit)) }
        let hash = Self.hash(bytes)
        let mask = slots.count - 1
        var i = Int(hash) & mask
        while slots[i] != nil { i = (i + 1) & mask }
        slots[i] = Entry(hash: hash, bytes: Array(bytes), text: text, value: value)
        count += 1
    }

    /// Forgets every string (the values were worked out under a setting that changed).
    @inlinable
    public mutating func removeAll() {
        slots = []
        count = 0
    }

    /// The smallest power of two at least twice `limit`.
    @inlinable
    static func slotCount(for limit: Int) -> Int {
        var n = 2
        while n < 2 * limit { n *= 2 }
        return n
    }

    /// FNV-1a over the bytes.
    @inlinable
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for byte in bytes { h = (h ^ UInt32(byte)) &* 16_777_619 }
        return h
    }

    @inlinable
    static func equal(_ kept: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard kept.count == bytes.count else { return false }
        return kept.withUnsafeBufferPointer { kept in
            var i = 0
            while i < kept.count {
                if kept[i] != bytes[i] { return false }
                i += 1
            }
            return true
        }
    }
}

/// Strings kept for themselves, with nothing worked out from them (an envelope's channels):
/// a name-only table.
public typealias InternedNames = InternedStrings<Void>

extension InternedStrings where Value == Void {
    /// The string kept for `bytes`, if any.
    @inlinable
    public func lookUp(name bytes: UnsafeBufferPointer<UInt8>) -> String? { lookUp(bytes)?.text }

    /// Keeps `text` for `bytes` (absent: `lookUp(name:)` said nil), unless the table is full.
    @inlinable
    public mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>, name text: String) { keep(bytes, text: text, value: ()) }
}
