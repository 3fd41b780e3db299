import Capture
import Foundation
import Lifecycle
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Replay

/// Selecting connections from a capture file, streamed in two passes.
@Suite struct ReplayLoaderTests {
    /// Three connections: client A (conn 1 and 3, another port each time) and client B (conn 2).
    func capture() throws -> String {
        let path = TestEnvironment.temporaryDirectory("replay-loader").appendingPathComponent("c.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        func client(_ conn: Int, _ address: String, agent: String, t: Micros) throws {
            try writer.append(.open(OpenRecord(conn: conn, t: t, client: address, server: "127.0.0.1:80")))
            var request = Fixture.request(conn, t: t + 1)
            request.headers = request.headers.map { $0.name == "User-Agent" ? HeaderField("User-Agent", agent) : $0 }
            try writer.append(.upgrade(request))
            try writer.append(.upgrade(Fixture.response(conn, t: t + 2)))
            try writer.append(.frame(Fixture.text(conn, t + 3, .server, Fixture.established)))
        }
        try client(1, "10.0.0.7:5000", agent: "A/1", t: 0)
        try client(2, "10.0.0.8:6000", agent: "B/1", t: 10)
        try writer.append(.end(EndRecord(conn: 1, t: 20, side: .server, kind: .rst)))
        try client(3, "10.0.0.7:5001", agent: "A/1", t: 30)
        try writer.append(.fault(FaultRecord(conn: 3, t: 40, rule: "drop", kind: "drop", detail: "dropped")))
        try writer.close()
        return path
    }

    func load(_ path: String, _ selection: ReplaySelection) throws -> [RecordedConnection] {
        try ReplayLoader.load({ try CaptureReader(path: path) }, selection: selection)
    }

    @Test func theFirstClientsConnectionsInOrder() throws {
        let recordings = try load(try capture(), .firstClient)
        #expect(recordings.map(\.conn) == [1, 3])
        #expect(recordings[0].serverEnd == RecordedEnding(kind: .reset, t: 20))
        #expect(recordings[1].serverEnd == RecordedEnding(kind: .fin, t: 40))
        #expect(recordings[1].frames.map(\.conn) == [3])
        #expect(recordings[0].response?.status == 101)
    }

    /// A client is named as `faultline analyze` names it: its id, its key, or a unique part.
    @Test func byConnectionOrByTheAnalyzersClientIDOrKey() throws {
        let path = try capture()
        #expect(try load(path, .connection(2)).map(\.conn) == [2])
        #expect(try load(path, .client("client-2")).map(\.conn) == [2])
        #expect(try load(path, .client("10.0.0.8 | B/1 | /app/key?protocol=7")).map(\.conn) == [2])
        #expect(try load(path, .client("A/1")).map(\.conn) == [1, 3])
        let all = try load(path, .allClients)
        #expect(all.map(\.conn) == [1, 2, 3])
        #expect(all.map(\.client) == ["client-1", "client-2", "client-1"])
        #expect(all.map(\.clientKey) == ["10.0.0.7 | A/1 | /app/key?protocol=7", "10.0.0.8 | B/1 | /app/key?protocol=7",
                                         "10.0.0.7 | A/1 | /app/key?protocol=7"])
    }

    @Test func selectionsThatMatchNothingOrTooMuchSaySo() throws {
        let path = try capture()
        #expect(throws: ReplayInputError("no connection 9 in the capture (it holds connections 1-3)")) { try load(path, .connection(9)) }
        #expect(throws: ReplayInputError.self) { try load(path, .client("nobody")) }
        let ambiguous = #expect(throws: ReplayInputError.self) { try load(path, .client("/app/key")) }
        #expect(ambiguous?.message.contains("matches 2 clients") == true)
    }

    @Test func aCaptureWithoutConnectionsIsUnusable() throws {
        let path = TestEnvironment.temporaryDirectory("replay-loader").appendingPathComponent("empty.jsonl").path
        try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test")).close()
        #expect(throws: ReplayInputError("the capture holds no connections (no open records): nothing to replay")) {
            try load(path, .firstClient)
        }
    }

    /// The same grouping as the analyzer: the key is `ClientKeyMode.standard`'s, and two
    /// overlapping connections of one key are two clients.
    @Test func clientsAreTheAnalyzersClients() throws {
        let path = TestEnvironment.temporaryDirectory("replay-loader").appendingPathComponent("overlap.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for (conn, t) in [(1, Micros(0)), (2, Micros(5))] {
            try writer.append(.open(OpenRecord(conn: conn, t: t, client: "[::1]:\(5000 + conn)", server: "[::1]:80")))
            try writer.append(.upgrade(Fixture.request(conn, t: t + 1)))
        }
        try writer.close()
        let all = try load(path, .allClients)
        #expect(all.map(\.client) == ["client-1", "client-2"])
        let open = OpenRecord(conn: 1, t: 0, client: "[::1]:5001", server: "[::1]:80")
        #expect(all.first?.clientKey == ClientKeyMode.standard.key(open: open, request: Fixture.request(1, t: 1)))
        #expect(all.first?.clientKey == "::1 | BirdRealtime/2.3 | /app/key?protocol=7")
        let ambiguous = #expect(throws: ReplayInputError.self) { try load(path, .client("BirdRealtime")) }
        #expect(ambiguous?.message.contains("give the client id") == true)
    }

    /// Issue 17 item 1: with both legs recorded, a side's end is the one its peer saw: a
    /// server FIN a blackhole swallowed (upstream leg only) is no end for the client, and the
    /// client's end is the one the proxy passed to the server.
    @Test func endsAreTakenFromThePeersLeg() {
        var builder = RecordedConnection.Builder(OpenRecord(conn: 1, t: 0, client: "127.0.0.1:5000", server: "127.0.0.1:80"))
        builder.add(.end(EndRecord(conn: 1, t: 10, side: .server, kind: .fin, leg: .upstream)))
        builder.add(.end(EndRecord(conn: 1, t: 20, side: .client, kind: .rst, leg: .client)))
        builder.add(.end(EndRecord(conn: 1, t: 21, side: .client, kind: .rst, detail: "sent by the proxy to the server",
                                   leg: .upstream)))
        #expect(builder.connection.end(of: .server) == nil)
        #expect(builder.connection.end(of: .client)?.t == 21)
        builder.add(.end(EndRecord(conn: 1, t: 22, side: .server, kind: .rst, leg: .client)))
        #expect(builder.connection.end(of: .server)?.t == 22)
    }
}
