import Foundation
import TestSupport
import WebSocket
@testable import Pcap

/// Builds a pcap of TCP conversations in code: each `Conversation` keeps both sides'
/// sequence numbers, so a test says what is sent and drops, reorders or cuts packets.
final class PcapBuilder {
    struct Packet {
        var bytes: [UInt8]
        var time: Int64
        var wireLength: Int?
    }
    var packets: [Packet] = []
    var time: Int64 = 1_700_000_000_000_000
    let link: LinkType

    init(link: LinkType = .raw) { self.link = link }

    func add(_ ip: [UInt8], wireLength: Int? = nil) {
        time += 1000
        var bytes = ip
        if link == .null { bytes = [2, 0, 0, 0] + ip }
        packets.append(Packet(bytes: bytes, time: time, wireLength: wireLength))
    }

    /// Writes the pcap and returns its path.
    func write() throws -> String {
        let path = TestEnvironment.temporaryDirectory("pcap-build").appendingPathComponent("built.pcap").path
        let writer = try PcapWriter(path: path, link: link)
        for p in packets { writer.write(p.bytes, time: p.time, wireLength: p.wireLength) }
        writer.close()
        return path
    }
}

final class Conversation {
    let builder: PcapBuilder
    let client: Endpoint
    let server: Endpoint
    var clientSeq: UInt32
    var serverSeq: UInt32

    init(_ builder: PcapBuilder, clientPort: UInt16 = 50000, serverPort: UInt16 = 9001,
         clientISN: UInt32 = 1000, serverISN: UInt32 = 5000, ipv6: Bool = false) {
        self.builder = builder
        client = Endpoint(IPAddress(ipv6 ? "2001:db8::1" : "127.0.0.1")!, clientPort)
        server = Endpoint(IPAddress(ipv6 ? "2001:db8::2" : "127.0.0.2")!, serverPort)
        clientSeq = clientISN
        serverSeq = serverISN
    }

    /// The packet `side` would send with `payload`; advances that side's sequence number.
    @discardableResult
    func packet(fromClient: Bool, _ payload: [UInt8], flags: TCPSegment.Flags = [.ack, .psh]) -> [UInt8] {
        let packet = PacketBuilder.tcp(from: fromClient ? client : server, to: fromClient ? server : client,
                                       seq: fromClient ? clientSeq : serverSeq, ack: fromClient ? serverSeq : clientSeq,
                                       flags: flags, payload: payload)
        var advance = UInt32(payload.count)
        if flags.contains(.syn) || flags.contains(.fin) { advance += 1 }
        if fromClient { clientSeq &+= advance } else { serverSeq &+= advance }
        return packet
    }

    func send(fromClient: Bool, _ payload: [UInt8], flags: TCPSegment.Flags = [.ack, .psh]) {
        builder.add(packet(fromClient: fromClient, payload, flags: flags))
    }

    func handshake() {
        send(fromClient: true, [], flags: [.syn])
        send(fromClient: false, [], flags: [.syn, .ack])
        send(fromClient: true, [], flags: [.ack])
    }

    func upgrade(extensions: String? = nil) {
        var request = "GET /app/key?protocol=7 HTTP/1.1\r\nHost: example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let extensions { request += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        send(fromClient: true, Array((request + "\r\n").utf8))
        var response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        response += "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
        if let extensions { response += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        send(fromClient: false, Array((response + "\r\n").utf8))
    }

    static func frame(fromClient: Bool, _ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false) -> [UInt8] {
        FrameEncoder.encode(Frame(fin: fin, rsv1: rsv1, opcode: opcode,
                                  maskingKey: fromClient ? MaskingKey(1, 2, 3, 4) : nil, payload: payload))
    }

    func text(fromClient: Bool, _ text: String) {
        send(fromClient: fromClient, Self.frame(fromClient: fromClient, .text, Array(text.utf8)))
    }
}
