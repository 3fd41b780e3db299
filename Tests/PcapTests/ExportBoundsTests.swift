import Capture
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Pcap

/// `PcapExporter` on input the analyzer accepts but that is extreme: connection ids at the
/// ends of their range, and many ended permessage-deflate connections, whose state must go
/// when each connection ends.
@Suite struct ExportBoundsTests {
    func exporter(_ name: String) throws -> (PcapExporter, String) {
        let path = TestEnvironment.temporaryDirectory("pcap-export-bounds").appendingPathComponent(name).path
        return (try PcapExporter(path: path), path)
    }

    /// One connection without usable addresses (the exporter numbers made-up ports from the id).
    func connection(_ conn: ConnectionID, deflate: Bool, into exporter: inout PcapExporter, twoLegs: Bool = false) {
        exporter.add(.header(CaptureHeader(tool: "test", startedAt: 1_000, source: twoLegs ? "proxy" : "test")))
        exporter.add(.open(OpenRecord(conn: conn, t: 0, client: "", server: "")))
        exporter.add(.upgrade(UpgradeRecord(conn: conn, t: 1, from: .client, method: "GET", target: "/", headers: [
            HeaderField("Host", "example"), HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
            HeaderField("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), HeaderField("Sec-WebSocket-Version", "13"),
        ])))
        let extensions = deflate ? [HeaderField("Sec-WebSocket-Extensions", "permessage-deflate")] : []
        exporter.add(.upgrade(UpgradeRecord(conn: conn, t: 2, from: .server, status: 101, reason: "Switching Protocols",
                                            headers: [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                                                      HeaderField("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")] + extensions)))
        exporter.add(.frame(FrameRecord(conn: conn, t: 3, from: .server, opcode: .text, rsv1: deflate, masked: false,
                                        payload: Array("hello".utf8), compressed: deflate)))
        exporter.add(.frame(FrameRecord(conn: conn, t: 4, from: .client, opcode: .text, rsv1: deflate, masked: true,
                                        payload: Array("hi".utf8), compressed: deflate)))
        for leg in twoLegs ? [Leg.client, .upstream] : [.client] {
            exporter.add(.end(EndRecord(conn: conn, t: 5, side: .client, kind: .fin, leg: twoLegs ? leg : nil)))
            exporter.add(.end(EndRecord(conn: conn, t: 6, side: .server, kind: .fin, leg: twoLegs ? leg : nil)))
        }
    }

    @Test(arguments: [Int.max, Int.max - 1, Int.min, -1, 0])
    func connectionIdsAtTheEndsOfTheirRangeExport(_ conn: ConnectionID) throws {
        var (exporter, path) = try exporter("ids.pcapng")
        connection(conn, deflate: false, into: &exporter)
        connection(conn == Int.min ? conn + 1 : conn - 1, deflate: false, into: &exporter, twoLegs: true)
        exporter.finish()
        var back = try PcapRecordSource(path: path, tool: "test")
        var frames = 0
        while let record = try back.next() { if case .frame = record { frames += 1 } }
        #expect(frames == 6)   // 2 on the single leg, 2 on each leg of the proxied one
    }

    @Test func endedDeflateConnectionsLeaveNoStateBehind() throws {
        var (exporter, path) = try exporter("ended.pcapng")
        for conn in 1...200 { connection(conn, deflate: true, into: &exporter, twoLegs: conn % 2 == 0) }
        #expect(exporter.connectionsHeld == 0)
        #expect(exporter.deflatersHeld == 0)
        exporter.finish()
        var back = try PcapRecordSource(path: path, tool: "test")
        var texts: [String] = []
        while let record = try back.next() {
            if case .frame(let frame) = record { texts.append(String(decoding: frame.payload, as: UTF8.self)) }
        }
        #expect(texts.count == 100 * 2 + 100 * 4)
        #expect(Set(texts) == ["hello", "hi"])
    }

    @Test func deflatersAreMadeOnlyForDirectionsThatCompress() throws {
        var (exporter, _) = try exporter("lazy.pcapng")
        exporter.add(.open(OpenRecord(conn: 1, t: 0, client: "10.0.0.1:5000", server: "10.0.0.2:80")))
        exporter.add(.upgrade(UpgradeRecord(conn: 1, t: 2, from: .server, status: 101, reason: "Switching Protocols",
                                            headers: [HeaderField("Sec-WebSocket-Extensions", "permessage-deflate")])))
        #expect(exporter.deflatersHeld == 0)
        exporter.add(.frame(FrameRecord(conn: 1, t: 3, from: .server, opcode: .text, rsv1: true, masked: false,
                                        payload: Array("hello".utf8), compressed: true)))
        #expect(exporter.deflatersHeld == 1)
        exporter.finish()
    }

    @Test func aRecordedHeadWithCRLFIsWrittenWithoutControlCharacters() throws {
        var upgrade = UpgradeRecord(conn: 1, t: 1, from: .server, status: 101, reason: "OK\r\nSet-Cookie: a=b", headers: [])
        #expect(PcapExporter.serialize(upgrade).filter { $0 == 10 }.count == 2)   // the status line and the blank line
        upgrade = UpgradeRecord(conn: 1, t: 1, from: .client, method: "GET", target: "/\r\nX: y", headers: [HeaderField("A", "b\r\nC: d")])
        let bytes = PcapExporter.serialize(upgrade)
        #expect(bytes.filter { $0 == 10 }.count == 3)   // the request line, one header, the blank line
    }
}
