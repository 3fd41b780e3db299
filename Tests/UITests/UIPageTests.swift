import Testing
import Capture
import JSON
import Lifecycle
import Vocabulary
@testable import UI

/// What a page is sent: one coalesced update however many records came, rows filtered and
/// windowed on the server, only the frames it does not hold yet (also after a reconnect).
@Suite struct UIPageTests {
    /// Hands the page a message it must understand.
    func tell(_ page: inout UIPage, _ message: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
        if !page.receive(message) { Issue.record("the page did not understand \(message)", sourceLocation: sourceLocation) }
    }

    @Test func manyRecordsMakeOneUpdateWithTheNewestState() throws {
        let model = try Session.model()
        var page = UIPage()
        _ = page.update(model)
        #expect(!page.isBehind(model))
        for c in 1...3 { for r in Session.open(c, at: Double(c)) { model.observe(r) } }
        for i in 0..<500 { model.observe(Session.text(2, at: 5 + Double(i) / 1000, from: .server, #"{"event":"bird:ping"}"#)) }
        #expect(page.isBehind(model))
        let update = page.update(model)
        #expect(!page.isBehind(model), "one update brings the page up to date")
        #expect(update["seq"]?.intValue == Int64(model.seq))
        let rows = update["rows"]?.arrayValue ?? []
        #expect(rows.map { $0["conn"]?.intValue } == [1, 2, 3])
        #expect(rows[1]["frames"]?.intValue == 500)
        #expect(rows[1]["ua"]?.stringValue == "sim/1.0")
        #expect(rows[1]["path"]?.stringValue == "/app/key?protocol=7")
    }

    @Test func tenThousandConnectionsAreFilteredAndWindowedOnTheServer() throws {
        let model = try Session.model()
        for c in 1...10_000 {
            for r in Session.open(c, at: Double(c) / 1000, agent: c % 100 == 0 ? "okhttp/4.12" : "sim/1.0") { model.observe(r) }
        }
        var page = UIPage()
        tell(&page, ["type": "view", "offset": 100, "count": 40])
        var update = page.update(model)
        #expect(update["total"]?.intValue == 10_000)
        #expect(update["rows"]?.arrayValue?.count == 40)
        #expect(update["rows"]?.arrayValue?.first?["conn"]?.intValue == 101)
        tell(&page, ["type": "view", "filter": "ua:okhttp", "offset": 0, "count": 500])
        update = page.update(model)
        #expect(update["total"]?.intValue == 100)
        // A page asks for at most 200 rows at once, whatever it sends.
        #expect(update["rows"]?.arrayValue?.count == 100)
        #expect(page.count == UIPage.maxRows)
        #expect(update["rows"]?.arrayValue?.allSatisfy { ($0["conn"]?.intValue ?? 1) % 100 == 0 } == true)
    }

    @Test func aReconnectingPageGetsOnlyTheFramesItLacks() throws {
        let model = try Session.model()
        for r in Session.open(1, at: 0) { model.observe(r) }
        for i in 1...10 { model.observe(Session.text(1, at: Double(i), from: .client, "{\"n\":\(i)}")) }
        var page = UIPage()
        tell(&page, ["type": "select", "conn": 1])
        let first = page.update(model)
        #expect(first["selected"]?["frames"]?.arrayValue?.count == 10)
        #expect(first["selected"]?["frames_after"]?.intValue == 10)
        for i in 11...14 { model.observe(Session.text(1, at: Double(i), from: .server, "{\"n\":\(i)}")) }
        // The socket dropped; a new page object (a new socket) says what it had.
        var again = UIPage()
        tell(&again, ["type": "hello", "selected": 1, "frames_after": 10])
        let resumed = again.update(model)
        let frames = resumed["selected"]?["frames"]?.arrayValue ?? []
        #expect(frames.map { $0["n"]?.intValue } == [11, 12, 13, 14])
        #expect(frames.first?["text"]?.stringValue == "{\"n\":11}")
        #expect(frames.first?["from"]?.stringValue == "server")
    }

    @Test func framesAreFilteredWithTheFramesCommandsWords() throws {
        let model = try Session.model()
        for r in Session.open(1, at: 0) { model.observe(r) }
        model.observe(Session.text(1, at: 1, from: .client, #"{"event":"bird:subscribe","data":{"channel":"news"}}"#))
        model.observe(Session.text(1, at: 2, from: .server, #"{"event":"bird:subscription_succeeded","channel":"news"}"#))
        model.observe(Session.text(1, at: 3, from: .client, #"{"event":"bird:ping"}"#))
        var page = UIPage()
        tell(&page, ["type": "select", "conn": 1, "frame_filter": "event:subscribe"])
        var update = page.update(model)
        #expect(update["selected"]?["frames"]?.arrayValue?.map { $0["n"]?.intValue } == [1])
        tell(&page, ["type": "select", "conn": 1, "frame_filter": "from:client"])
        update = page.update(model)
        #expect(update["selected"]?["frames"]?.arrayValue?.map { $0["n"]?.intValue } == [1, 3])
        tell(&page, ["type": "select", "conn": 1, "frame_filter": "NEWS from:server"])
        update = page.update(model)
        #expect(update["selected"]?["frames"]?.arrayValue?.map { $0["n"]?.intValue } == [2])
    }

    @Test func theModelIsBoundedAndSaysWhatItDropped() throws {
        let model = try Session.model()
        let extra = 50
        for c in 1...(UIModel.maxRows + extra) {
            model.observe(.open(OpenRecord(conn: c, t: Micros(c), client: "c", server: "s")))
            model.observe(.end(EndRecord(conn: c, t: Micros(c) + 1, side: .client, kind: .fin)))
        }
        #expect(model.rows.count == UIModel.maxRows)
        #expect(model.evictedRows == extra)
        #expect(model.rows[1] == nil && model.rows[UIModel.maxRows + extra] != nil, "the oldest ended rows go first")
        var page = UIPage()
        let first = page.update(model)
        #expect(first["evicted_rows"]?.intValue == Int64(extra))
        // The frame ring keeps the newest frames, each cut to the prefix, and says so.
        let big = String(repeating: "x", count: UIModel.payloadPrefix + 100)
        for i in 0..<(UIModel.frameCapacity + 10) { model.observe(Session.text(UIModel.maxRows, at: Double(i), from: .client, big)) }
        #expect(model.frames(of: UIModel.maxRows, after: 0, matching: UIFrameFilter(""), limit: .max).count == UIModel.frameCapacity)
        tell(&page, ["type": "select", "conn": .int(Int64(UIModel.maxRows))])
        let selected = page.update(model)["selected"]
        #expect(selected?["frames_lost"]?.intValue == 10)
        #expect(selected?["frames"]?.arrayValue?.first?["cut"]?.boolValue == true)
        #expect(selected?["frames"]?.arrayValue?.first?["text"]?.stringValue?.utf8.count == UIModel.payloadPrefix)
    }

    @Test func aClientsStateFindingsAndLaneComeFromTheAnalyzer() throws {
        let model = try Session.model()
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: model.spec))
        var records = Session.open(1, at: 0)
        records.append(Session.text(1, at: 0.1, from: .server,
                                    #"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}"#))
        records.append(.fault(FaultRecord(conn: 1, t: Session.us(1), rule: "close:4009", kind: "close", target: .client, detail: "sent close 4009")))
        records.append(.frame(FrameRecord(conn: 1, t: Session.us(1), from: .server, opcode: .close, masked: false,
                                          payload: [0x0F, 0xA9], action: .injected, fault: "close:4009")))
        records.append(.end(EndRecord(conn: 1, t: Session.us(1.1), side: .server, kind: .fin)))
        Session.feed(records, to: model, analyzer: &analyzer)
        let row = try #require(model.rows[1])
        let client = try #require(row.client.flatMap { model.clients[$0] })
        #expect(client.state == "failed")
        #expect(row.end == "close 4009 from server")
        let lane = try #require(model.laneImage(client: client.info.id))
        #expect(lane.hasPrefix("<svg"))
        #expect(lane.contains("data-state=\"failed\""))
        #expect(lane.contains("<style>"))
    }
}
