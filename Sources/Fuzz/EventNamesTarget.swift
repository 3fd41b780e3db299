import Bird
import JSON
import Protocols

extension FuzzTarget {
    /// The byte-level Bird decoding (event-name scanner, envelope, data fields) against the
    /// JSON parser's tree, which is their contract: they must agree on every input.
    static let eventNames = FuzzTarget(
        name: "event-names",
        summary: "EventNameScanner and BirdDecoder's byte-level envelope vs JSONParser (differential)") { input in
        let payload = Array(input)
        let scanned = EventNameScanner.eventName(in: payload)
        guard payload.first == UInt8(ascii: "{") else {
            require(scanned == nil, "a name found in a payload that is not an object")
            return
        }
        let tree = try? JSONParser.parse(payload)
        let parsed = tree?.objectValue?["event"]?.stringValue
        require(scanned == parsed, "scanner says \(scanned ?? "nil"), parser says \(parsed ?? "nil")")
        var decoder = BirdDecoder()
        let fast = decoder.decode(payload)
        require(fast?.name == scanned, "Bird decoder and scanner disagree")
        // The envelope and every field the rules read, byte-level vs the tree.
        var treeDecoder = BirdDecoder()
        let reference = tree.flatMap { treeDecoder.decode($0) }
        require((fast == nil) == (reference == nil), "byte-level and tree envelopes disagree on being an event")
        guard let fast, let reference else { return }
        require(fast.kind == reference.kind && decoder.prefix == treeDecoder.prefix, "kind or prefix disagrees")
        require(fast.channel == reference.channel, "channel: \(fast.channel ?? "nil") vs \(reference.channel ?? "nil")")
        require(fast.rawData == reference.rawData && fast.data == reference.data, "data disagrees")
        require(fast.socketID == reference.socketID && fast.activityTimeout == reference.activityTimeout
                    && fast.targetChannel == reference.targetChannel && fast.auth == reference.auth
                    && fast.channelData == reference.channelData && fast.userData == reference.userData
                    && fast.errorCode == reference.errorCode, "a data field disagrees")
    }
}
