import Foundation
import JSON
import Testing
import TestSupport
@testable import Realtime

/// The decoder defers decoding a string `data` until it is read; every event must equal,
/// field by field and accessor by accessor, the event decoded at once.
@Suite struct DeferredDataTests {
    static func expectSame(_ payload: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        var deferring = RealtimeDecoder()
        let a = deferring.decode(payload)
        let b = decodedEagerly(payload, kind: deferring.kind(of:))
        let text = String(decoding: payload, as: UTF8.self)
        guard let a, let b else {
            #expect(a == nil && b == nil, "\(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(a == b, "\(text)", sourceLocation: sourceLocation)
        #expect(a.hashValue == b.hashValue, sourceLocation: sourceLocation)
        #expect(a.data == b.data && a.rawData == b.rawData && a.name == b.name && a.channel == b.channel
                    && a.kind == b.kind, "\(text)", sourceLocation: sourceLocation)
        #expect(a.socketID == b.socketID && a.activityTimeout == b.activityTimeout && a.targetChannel == b.targetChannel
                    && a.auth == b.auth && a.channelData == b.channelData && a.userData == b.userData
                    && a.errorCode == b.errorCode, "\(text)", sourceLocation: sourceLocation)
    }

    /// The envelope with `data` decoded at once, as before decoding was deferred (the
    /// event's kind from the decoder under test, which detected the prefix).
    static func decodedEagerly(_ payload: [UInt8], kind: (String) -> RealtimeEventKind) -> RealtimeEvent? {
        guard let first = payload.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{"),
              let value = try? JSONParser.parse(payload), let object = value.objectValue,
              let name = object["event"]?.stringValue else { return nil }
        let raw = object["data"]
        return RealtimeEvent(name: name, channel: object["channel"]?.stringValue,
                             data: RealtimeDecoder.decodeData(raw), rawData: raw, kind: kind(name))
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
    ])
    func craftedEnvelopes(_ payload: String) {
        Self.expectSame(Array(payload.utf8))
    }

    @Test func settingDataReplacesTheDeferredValue() throws {
        var decoder = RealtimeDecoder()
        let decoded = decoder.decode(Array(#"{"event":"e","data":"{\"channel\":\"a\"}"}"#.utf8))
        var event = try #require(decoded)
        #expect(event.targetChannel == "a")
        event.data = ["channel": "b"]
        #expect(event.targetChannel == "b")
        #expect(event == RealtimeEvent(name: "e", channel: nil, data: ["channel": "b"], rawData: event.rawData, kind: .other))
    }
}
