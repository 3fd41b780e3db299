import Foundation
import JSON
import Protocols
import TestSupport
import Testing
@testable import Bird

/// The decoder reads envelopes byte-level and finds `data`'s fields in its bytes; every
/// event must equal, field by field and accessor by accessor, the event decoded through a
/// JSON tree (the reference).
@Suite struct ByteLevelDecodeTests {
    /// The reference: the whole payload parsed into a tree, data decoded at once.
    static func treeDecode(_ payload: [UInt8], _ decoder: inout BirdDecoder) -> RealtimeEvent? {
        guard let first = payload.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }),
              first == UInt8(ascii: "{"), let tree = try? JSONParser.parse(payload) else { return nil }
        return decoder.decode(tree)
    }

    static func expectSame(_ payload: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        var fast = BirdDecoder()
        var reference = BirdDecoder()
        let a = fast.decode(payload)
        let b = treeDecode(payload, &reference)
        let text = String(decoding: payload, as: UTF8.self)
        #expect(fast.prefix == reference.prefix, "\(text)", sourceLocation: sourceLocation)
        guard let a, let b else {
            #expect(a == nil && b == nil, "\(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(a == b, "\(text)", sourceLocation: sourceLocation)
        #expect(a.hashValue == b.hashValue, sourceLocation: sourceLocation)
        let sameEnvelope: Bool = a.data == b.data && a.rawData == b.rawData && a.name == b.name
        #expect(sameEnvelope && a.channel == b.channel && a.kind == b.kind, "\(text)", sourceLocation: sourceLocation)
        let sameIDs: Bool = a.socketID == b.socketID && a.activityTimeout == b.activityTimeout
        let sameChannels: Bool = a.targetChannel == b.targetChannel && a.channelData == b.channelData
        let sameAuth: Bool = a.auth == b.auth && a.userData == b.userData && a.errorCode == b.errorCode
        #expect(sameIDs && sameChannels && sameAuth, "\(text)", sourceLocation: sourceLocation)
    }

    @Test func everyTextFrameOfTheSampleCapturesDecodesTheSame() throws {
        let folder = TestEnvironment.repoRoot.appendingPathComponent("Captures")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jsonl") }
        #expect(names.count >= 20)
        var events = 0
        for name in names {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            for line in data.split(separator: 0x0A) {
                guard let record = try? JSONParser.parse(Array(line)), record["op"] == 1,
                      let text = record["text"]?.stringValue else { continue }
                Self.expectSame(Array(text.utf8))
                events += 1
            }
        }
        #expect(events > 100)
    }

    @Test(arguments: [
        #"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":60}"}"#,
        #"{"event":"price","channel":"m","data":"{\"channel\":\"inner\",\"p\":1.5}"}"#,
        #"{"event":"price","channel":"m","data":"  [1,2,{\"a\":null}]"}"#,
        #"{"event":"price","channel":"m","data":"{not json"}"#,
        #"{"event":"price","channel":"m","data":"{\"a\":1} trailing"}"#,
        #"{"event":"price","channel":"m","data":"plain text"}"#,
        #"{"event":"price","channel":"m","data":""}"#,
        #"{"event":"price","channel":"m","data":"   "}"#,
        #"{"event":"price","data":{"channel":"object"}}"#,
        #"{"event":"price","data":7}"#,
        #"{"event":"price","data":null}"#,
        #"{"event":"price"}"#,
        #"{"event":"bird:subscribe","data":"{\"channel\":\"private-a\",\"auth\":\"k:s\",\"channel_data\":\"{}\"}"}"#,
        #"{"event":"bird:error","data":"{\"code\":4009,\"message\":\"x\"}"}"#,
        #"{"event":"bird:signin","data":"{\"auth\":\"k:s\",\"user_data\":\"{\\\"id\\\":\\\"u\\\"}\"}"}"#,
        #"{"event":3,"data":"{}"}"#,
        #"not an event"#,
        #"{"ev\u0065nt":"escaped key","data":"{\"socket_id\":\"9\"}"}"#,
        #"{"event":"esc\u0061ped","channel":"ch\"an","data":{"ch\u0061nnel":"x","channel":"y"}}"#,
        #"{"event":"e","data":"{\"channel\":\"first\",\"channel\":\"second\"}"}"#,
        #"  {"event":"bird:pong"}  "#,
        #"{"event":"e","data":{"code":4.0e3,"activity_timeout":"12"}}"#,
        #"{"event":"e","data":"{\"code\":40090000000000000000}"}"#,
    ])
    func craftedEnvelopes(_ payload: String) {
        Self.expectSame(Array(payload.utf8))
    }

    @Test func settingDataReplacesTheDeferredValue() throws {
        var decoder = BirdDecoder()
        let decoded = decoder.decode(Array(#"{"event":"e","data":"{\"channel\":\"a\"}"}"#.utf8))
        var event = try #require(decoded)
        #expect(event.targetChannel == "a")
        event.data = ["channel": "b"]
        #expect(event.targetChannel == "b")
        #expect(event == RealtimeEvent(name: "e", channel: nil, data: ["channel": "b"], rawData: event.rawData, kind: .other))
    }
}
