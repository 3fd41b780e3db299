import JSON
import Testing
@testable import Protocols

/// The skimmer must find what the parser's tree holds, and refuse what the parser refuses.
@Suite struct JSONSkimmerTests {
    static let keys: [StaticString] = ["event", "channel", "data"]

    static func reference(_ text: String, _ key: String) -> JSONValue?? {
        guard case .object(let object)? = try? JSONParser.parse(text) else { return nil }
        return .some(object[key])
    }

    @Test(arguments: [
        #"{"event":"a","channel":"c","data":{"x":[1,2]}}"#,
        #" {"data":"{\"socket_id\":\"1.2\"}","event":"b"} "#,
        #"{"event":"first","event":"second","channel":null}"#,
        #"{"event":"with \"quote\"","data":-1.5e3}"#,
        #"{}"#,
        #"{"event":1}"#,
        #"[1]"#,
        #"{"event":"x",}"#,
        #"{"event":"x"} y"#,
        "{\"event\":\"caf\u{e9}\"}",
        #"{"event":"x","data":1e999}"#,
        #"{"event":"x","data":-2.5E+400}"#,
        #"{"event":"x","data":1e-999}"#,
        #"{"event":"x","data":1.7976931348623157e308}"#,
        "{\"event\":\"x\",\"data\":1\(String(repeating: "0", count: 309))}",
        "{\"event\":\"x\",\"data\":1\(String(repeating: "0", count: 308))}",
    ])
    func findsWhatTheTreeHolds(_ text: String) {
        let bytes = Array(text.utf8)
        let outcome = JSONSkimmer.members(of: bytes, named: Self.keys)
        guard case .members(let members) = outcome else {
            #expect(outcome == .notAnObject)
            #expect(Self.reference(text, "event") == nil, "\(text)")
            return
        }
        for (index, key) in ["event", "channel", "data"].enumerated() {
            let expected = Self.reference(text, key) ?? nil
            let found = members[index].map { try? JSONParser.parse(bytes[$0.range]) } ?? nil
            #expect(found == expected, "\(text) \(key)")
            if let span = members[index], span.isString, !span.escaped {
                #expect(String(decoding: bytes[span.content], as: UTF8.self) == expected?.stringValue)
            }
        }
    }

    @Test func anEscapedKeyNeedsTheParser() {
        #expect(JSONSkimmer.members(of: Array(#"{"ev\u0065nt":"x"}"#.utf8), named: Self.keys) == .needsParser)
    }

    @Test func dataFieldsAreFoundInDoubleEncodedData() {
        let data = Array(#""{\"socket_id\":\"7.1\",\"activity_timeout\":30,\"code\":4009}""#.utf8)
        let event = RealtimeEvent(name: "e", channel: "c", dataJSON: data[...], kind: .other)
        #expect(event.socketID == "7.1")
        #expect(event.activityTimeout == 30)
        #expect(event.errorCode == 4009)
        #expect(event.targetChannel == "c")
        #expect(event.data == ["socket_id": "7.1", "activity_timeout": 30, "code": 4009])
        #expect(event.rawData == .string(#"{"socket_id":"7.1","activity_timeout":30,"code":4009}"#))
    }

    /// The handshake's two fields read at once are the two read one by one, however the
    /// data is written: an object, a string holding one, escaped keys (the parser's path),
    /// one field or neither, no data, data given as values.
    @Test(arguments: [
        #"{"socket_id":"1.2","activity_timeout":120}"#,
        #""{\"socket_id\":\"3.4\",\"activity_timeout\":30}""#,
        #""{\"activity_timeout\":\"12\"}""#,
        #"{"s\u006fcket_id":"5.6","activity_timeout":1.5}"#,
        #""{\"\\u0073ocket_id\":\"7.8\"}""#,
        #"{"socket_id":9,"activity_timeout":null}"#,
        #""{\"other\":1}""#,
        #""plain text""#,
        #"[1,2]"#,
    ])
    func handshakeFieldsAtOnceAreTheFieldsOneByOne(_ text: String) {
        let event = RealtimeEvent(name: "e", channel: nil, dataJSON: Array(text.utf8)[...], kind: .connectionEstablished)
        let fields = event.handshakeFields
        #expect(fields.socketID == event.socketID, "\(text)")
        #expect(fields.activityTimeout == event.activityTimeout, "\(text)")
        let given = RealtimeEvent(name: "e", channel: nil, data: event.data, rawData: event.rawData, kind: .connectionEstablished)
        #expect(given.handshakeFields.socketID == event.socketID && given.handshakeFields.activityTimeout == event.activityTimeout)
        let none = RealtimeEvent(name: "e", channel: nil, dataJSON: nil, kind: .connectionEstablished)
        #expect(none.handshakeFields.socketID == nil && none.handshakeFields.activityTimeout == nil)
    }

    @Test func handshakeFieldsOfDoubleEncodedData() {
        let data = Array(#""{\"socket_id\":\"3.4\",\"activity_timeout\":30}""#.utf8)
        let fields = RealtimeEvent(name: "e", channel: nil, dataJSON: data[...], kind: .connectionEstablished).handshakeFields
        #expect(fields.socketID == "3.4" && fields.activityTimeout == 30)
    }

    /// Double-encoded data is parsed for a member only when its text may name it: the
    /// shortcut must answer as the parse does, for a key spelled as it is, spelled with
    /// `\u` escapes (at either level of encoding), or absent.
    @Test(arguments: [
        (#""{\"channel\":\"inner\"}""#, "inner"),
        (#""{\"symbol\":\"BRD\",\"price\":1.5}""#, "outer"),
        (#""{\"\\u0063hannel\":\"escaped inside\"}""#, "escaped inside"),
        (#""{\"\u0063hannel\":\"escaped outside\"}""#, "escaped outside"),
        (#""{\"chan\":1,\"channels\":2}""#, "outer"),
        (#""not json, channel""#, "outer"),
    ])
    func aMemberOfDoubleEncodedDataIsFoundWhereverItIsSpelled(_ data: String, _ channel: String) {
        let event = RealtimeEvent(name: "e", channel: "outer", dataJSON: Array(data.utf8)[...], kind: .other)
        #expect(event.targetChannel == channel)
        #expect(RealtimeEvent.mayName("channel", Array(#""{\"symbol\":1}""#.utf8)[...]) == false)
    }
}
