import CLI
import Capture
import Foundation
import Glibc
import Inputs
import Pcap
import Testing

/// An input without a connection is reported with what it held and what to try, for pcaps
/// (wrong port, a filter that kept nothing, no TCP) and captures alike.
@Suite struct NoConnectionTests {
    static func temporaryPath(_ name: String) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-noconn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    /// Reads every record of `path` and returns the message (nil: it held a connection).
    static func message(_ path: String, filter: String? = nil) throws -> String? {
        var source = try InputSources.open(path, options: .init(filter: filter))
        var inventory = InputInventory()
        while let record = try source.next() { inventory.observe(record) }
        return inventory.noConnectionMessage(path, source: source)
    }

    /// Raw-IP pcap of plain TCP flows: two to port 5432 (a database, say), one to 443 whose
    /// start was not captured; none carries HTTP.
    static func pcapOfOtherTraffic() throws -> String {
        let path = temporaryPath("other.pcap")
        let writer = try PcapWriter(path: path, link: .raw)
        let server = IPAddress(ipv4: 0x0A00_0001)
        for (i, port) in [UInt16(40001), 40002].enumerated() {
            let client = Endpoint(IPAddress(ipv4: 0x0A00_0002), port)
            let db = Endpoint(server, 5432)
            writer.write(PacketBuilder.tcp(from: client, to: db, seq: 100, ack: 0, flags: .syn), time: Int64(i) * 1000)
            writer.write(PacketBuilder.tcp(from: db, to: client, seq: 500, ack: 101, flags: [.syn, .ack]), time: Int64(i) * 1000 + 10)
            writer.write(PacketBuilder.tcp(from: client, to: db, seq: 101, ack: 501, flags: [.ack, .psh],
                                           payload: Array("\u{0}\u{0}\u{0}\u{8}\u{4}\u{d2}\u{16}\u{2f}".utf8)), time: Int64(i) * 1000 + 20)
        }
        writer.write(PacketBuilder.tcp(from: Endpoint(server, 443), to: Endpoint(IPAddress(ipv4: 0x0A00_0003), 50000),
                                       seq: 9000, ack: 77, flags: [.ack, .psh], payload: [0x17, 0x03, 0x03, 0x00, 0x01, 0xFF]), time: 5000)
        writer.close()
        return path
    }

    @Test func aPcapOfOtherTrafficNamesItsFlowsAndPorts() throws {
        let path = try Self.pcapOfOtherTraffic()
        let message = try #require(try Self.message(path))
        #expect(message.hasPrefix("\(path): no WebSocket connection found: 7 packets, 3 TCP flows (port 5432 (2 flows), port 443 (1 flow)), none with a WebSocket upgrade or frames."), "\(message)")
        #expect(message.contains("TLS (wss://) cannot be read from a pcap"), "\(message)")
    }

    @Test func aFilterThatKeptNothingIsNamed() throws {
        let path = try Self.pcapOfOtherTraffic()
        let message = try #require(try Self.message(path, filter: "tcp port 8080"))
        #expect(message == "\(path): no WebSocket connection found: no packet passed --filter 'tcp port 8080'. Try a wider filter, or none.")
        let some = try #require(try Self.message(path, filter: "tcp port 5432"))
        #expect(some.contains("6 packets, 2 TCP flows (port 5432 (2 flows))") && some.contains("--filter 'tcp port 5432' may exclude it"), "\(some)")
    }

    @Test func aCaptureWithoutConnectionsSaysWhatItHeld() throws {
        let path = Self.temporaryPath("empty.jsonl")
        let header = CaptureHeader(tool: "faultline test", startedAt: 1, source: "proxy", settings: ["listen": "127.0.0.1:7000"])
        var bytes = RecordCoding.encode(.header(header))
        bytes += RecordCoding.encode(.note(NoteRecord(conn: nil, t: 5, level: .info, message: "nothing")))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let message = try #require(try Self.message(path))
        #expect(message == "\(path): no connection recorded: the capture holds its header and 1 note record (written by proxy listening on 127.0.0.1:7000). "
                + "Point the client at the proxy's --listen address and stop the proxy after the client has connected.")
    }

    @Test func inputsWithAConnectionPass() throws {
        let root = #filePath.split(separator: "/").dropLast(3).map(String.init).joined(separator: "/")
        #expect(try Self.message("/" + root + "/Captures/pcap/websocket-plain.pcap") == nil)
        #expect(try Self.message("/" + root + "/Captures/clean.jsonl") == nil)
    }
}
