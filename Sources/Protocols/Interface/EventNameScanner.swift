import JSON

/// Finds the `event` member of a JSON text frame (`{"event":"bird:pong",...}`, the envelope
/// of Pusher-protocol and other JSON-event protocols) without building a JSON tree: a
/// generic skim of JSON, beside `JSONSkimmer`, so that `faultline frames` can label frames
/// without knowing any protocol entry. `faultline frames` asks this of every text frame of
/// captures of gigabytes, and a full parse (every member, every string allocated) was a
/// tenth of its time.
///
/// The answer is exactly `JSONParser.parse(payload)["event"]?.stringValue` for an object: the
/// whole payload is validated against the same grammar as `JSONParser` (strict RFC 8259,
/// its depth limit, UTF-8 checked strings, paired surrogates), so invalid JSON gives nil as
/// the parser's error would, and the first "event" member wins as in `JSONObject`. What the
/// scanner does not decode itself (an escaped key or event value, rare in real traffic) it
/// hands to the full parser, so the answer stays exact.
public enum EventNameScanner {
    /// The value of the object's first "event" member when it is a string; nil when the
    /// payload is not a JSON object, has no such member, or it is not a string.
    public static func eventName(in payload: [UInt8]) -> String? {
        switch find(in: payload) {
        case nil: return nil
        case .span(let range): return String(decoding: payload[range], as: UTF8.self)
        case .decoded(let name): return name
        }
    }

    /// Where the event name is.
    public enum Found: Equatable, Sendable {
        /// The name is these payload bytes exactly: valid UTF-8 between the quotes, with no
        /// escapes (so it can be copied into JSON output as it is).
        case span(Range<Int>)
        /// The name had escapes; this is its decoded value.
        case decoded(String)
    }

    /// The event name's location (see `eventName(in:)`), without making a String for it.
    public static func find(in payload: [UInt8]) -> Found? {
        guard payload.first == UInt8(ascii: "{") else { return nil }
        switch JSONSkimmer.members(of: payload, named: eventKey) {
        case .notAnObject:
            return nil
        case .needsParser:
            return ((try? JSONParser.parse(payload))?["event"]?.stringValue).map { .decoded($0) }
        case .members(let members):
            guard let span = members[0], span.isString else { return nil }
            if !span.escaped { return .span(span.content) }
            return ((try? JSONParser.parse(payload[span.range]))?.stringValue).map { .decoded($0) }
        }
    }

    static let eventKey: [StaticString] = ["event"]
}
