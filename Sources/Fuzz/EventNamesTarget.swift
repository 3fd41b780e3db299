import Capture
import JSON
import Realtime

extension FuzzTarget {
    /// The event-name scanner against the JSON parser (its contract) and the Bird decoder.
    static let eventNames = FuzzTarget(
        name: "event-names",
        summary: "EventNameScanner vs JSONParser and RealtimeDecoder (differential)") { input in
        let payload = Array(input)
        let scanned = EventNameScanner.eventName(in: payload)
        guard payload.first == UInt8(ascii: "{") else {
            require(scanned == nil, "a name found in a payload that is not an object")
            return
        }
        let parsed = (try? JSONParser.parse(payload))?.objectValue?["event"]?.stringValue
        require(scanned == parsed, "scanner says \(scanned ?? "nil"), parser says \(parsed ?? "nil")")
        var decoder = RealtimeDecoder()
        require(decoder.decode(payload)?.name == scanned, "Bird decoder and scanner disagree")
    }
}
