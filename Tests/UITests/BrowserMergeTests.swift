import Testing
import Foundation
import Capture
import JSON
import TestSupport
import WebSocket

/// `faultline ui --merge` in a real headless Chromium (and in Firefox, by FirefoxTests): two replicas' captures, where one
/// client's connection ends on replica a and its reconnect lands on replica b, are one
/// session on the page (one client with both connections), where without --merge they are
/// two inputs and so two clients.
@Suite(.serialized) struct BrowserMergeTests {
    /// Replica `name`'s capture: one connection of the client `merge-client/1.0`, opened at
    /// `open` µs after the replica's start `startedAt`, ended by a FIN at `end` µs if given.
    static func writeReplica(_ path: String, name: String, startedAt: Int64, open: Int64, end: Int64?) throws {
        let settings: JSONObject = ["listen": .string("127.0.0.1:1"), CaptureHeader.replicaKey: .string(name)]
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: startedAt, source: "proxy", settings: settings))
        try writer.append(.open(OpenRecord(conn: 1, t: open, client: "127.0.0.1:50001", server: "127.0.0.1:1")))
        try writer.append(.upgrade(UpgradeRecord(conn: 1, t: open, from: .client, method: "GET", target: "/app/key?protocol=7",
                                                 headers: [HeaderField("Host", "h"), HeaderField("User-Agent", "merge-client/1.0")])))
        try writer.append(.upgrade(UpgradeRecord(conn: 1, t: open + 10, from: .server, status: 101, reason: "Switching Protocols", headers: [])))
        if let end { try writer.append(.end(EndRecord(conn: 1, t: end, side: .server, kind: .fin))) }
        try writer.close()
    }

    /// The client ids the page lists for its connection rows, once both rows are shown.
    static func clientsOnThePage(_ arguments: [String], dir: URL, name: String, engine: Browser.Engine) throws -> [String]? {
        let ui = try ChildProcess.faultline(["ui"] + arguments + ["--listen", "127.0.0.1:0"])
        defer { ui.stop() }
        let address = try #require(uiAddress(ui.waitForLine(timeout: 120) { $0.hasPrefix("UI on ") }), "\(ui.errorOutput)")
        let run = try Browser.run(address, steps: [
            ["wait": "document.querySelector('#counts').textContent.indexOf('2 connections') === 0", "timeout": 60],
            ["eval": "Array.from(document.querySelectorAll('#rows .row .c-client')).map(function (e) { return e.textContent; }).join(' ')"],
        ], in: dir, name: name, engine: engine)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
        return run.value(1)?.stringValue.map { $0.split(separator: " ").map(String.init) }
    }

    @Test func aFleetsReplicasAreOneSessionOnThePage() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Self.replicasMerged(in: .chromium)
    }

    static func replicasMerged(in engine: Browser.Engine) throws {
        let dir = TestEnvironment.temporaryDirectory("ui-merge")
        let a = dir.appendingPathComponent("a.jsonl").path, b = dir.appendingPathComponent("b.jsonl").path
        // Replica b started 1 s after a: the client's drop on a at 2 s is followed by its
        // reconnect on b at 2.5 s (b's 1.5 s).
        try Self.writeReplica(a, name: "a", startedAt: 1_764_455_426_000_000, open: 1_000_000, end: 2_000_000)
        try Self.writeReplica(b, name: "b", startedAt: 1_764_455_427_000_000, open: 1_500_000, end: nil)

        let merged = try #require(try Self.clientsOnThePage(["--merge", a, b], dir: dir, name: "merged", engine: engine))
        #expect(merged.count == 2 && Set(merged).count == 1, "merged: one client with both connections, got \(merged)")
        let apart = try #require(try Self.clientsOnThePage([a, b], dir: dir, name: "apart", engine: engine))
        #expect(apart.count == 2 && Set(apart).count == 2, "apart: each input its own client, got \(apart)")
    }
}
