import Vocabulary

extension ChannelsStaleAuth {
    /// The auths one client sent, in the order first sent, at most `capacity` of them: the
    /// oldest is forgotten to make room (the rule counts it). At 2,000 clients of a long
    /// capture this list was the engine's largest per-client state (6.2 MB at 1 GB of
    /// synthetic capture: 48-byte entries with a channel text each, in arrays grown by
    /// doubling to room for 64). So an entry is 40 bytes with its channel as a number into
    /// the client's own table of channel texts, the ring grows eight entries at a time,
    /// and forgetting the oldest moves nothing.
    struct SentAuths: Sendable {
        struct Entry: Sendable {
            var digest: Digest
            var t: Micros
            var conn: ConnectionID
            /// The channel's place in `channels`.
            var channel: UInt32
        }

        /// Two keyed 64-bit hashes of an auth's text (`ChannelsStaleAuth.digest`).
        struct Digest: Sendable, Equatable {
            var first: UInt64
            var second: UInt64
        }

        let capacity: Int
        /// The ring; once it holds `capacity` entries, `start` is the oldest.
        private var ring: [Entry] = []
        private var start = 0
        /// The channel texts entries point into; at most `2 * capacity`, rebuilt from the
        /// kept entries' channels when full (a client subscribing endless distinct channels
        /// keeps only those its kept auths name).
        private var channels: [String] = []

        init(capacity: Int) { self.capacity = max(1, capacity) }

        var count: Int { ring.count }

        /// The kept entry of this digest, if any.
        func entry(of digest: Digest) -> Entry? {
            ring.first { $0.digest == digest }
        }

        func channel(of entry: Entry) -> String { channels[Int(entry.channel)] }

        /// Keeps a new auth; returns the oldest one, forgotten to make room, if the ring was full.
        mutating func append(_ digest: Digest, t: Micros, conn: ConnectionID, channel: String) -> Entry? {
            let entry = Entry(digest: digest, t: t, conn: conn, channel: number(of: channel))
            if ring.count < capacity {
                if ring.count == ring.capacity { ring.reserveCapacity(min(capacity, ring.count + 8)) }
                ring.append(entry)
                return nil
            }
            let oldest = ring[start]
            ring[start] = entry
            start = (start + 1) % ring.count
            return oldest
        }

        /// The channel's number, the text added to the table if new.
        private mutating func number(of channel: String) -> UInt32 {
            if let i = channels.firstIndex(of: channel) { return UInt32(truncatingIfNeeded: i) }
            if channels.count >= 2 * capacity { keepOnlyNamedChannels() }
            channels.append(channel)
            return UInt32(truncatingIfNeeded: channels.count - 1)
        }

        /// Drops the channel texts no kept entry names, and renumbers the entries.
        private mutating func keepOnlyNamedChannels() {
            var kept: [String] = []
            var renumbered: [UInt32: UInt32] = [:]
            for i in ring.indices {
                let old = ring[i].channel
                if let new = renumbered[old] {
                    ring[i].channel = new
                } else {
                    let new = UInt32(truncatingIfNeeded: kept.count)
                    kept.append(channels[Int(old)])
                    renumbered[old] = new
                    ring[i].channel = new
                }
            }
            channels = kept
        }

        /// How many channel texts are held, and the ring's room (for tests).
        var channelCount: Int { channels.count }
        var room: Int { ring.capacity }
    }
}
