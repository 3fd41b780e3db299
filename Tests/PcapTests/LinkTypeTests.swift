import Testing
import Foundation
import TestSupport
@testable import Pcap

/// Packets built in code, wrapped in each link layer, written with libpcap's `pcap_dump`
/// and read back through `PcapReader` and `PacketDecoder`.
@Suite struct LinkTypeTests {
    static let client = Endpoint(IPAddress("192.168.1.20")!, 51000)
    static let server = Endpoint(IPAddress("10.0.0.5")!, 8080)
    static let client6 = Endpoint(IPAddress("2001:db8::1")!, 51000)
    static let server6 = Endpoint(IPAddress("2001:db8::2")!, 443)

    static func ip(v6: Bool = false, payload: [UInt8] = Array("hello".utf8)) -> [UInt8] {
        PacketBuilder.tcp(from: v6 ? client6 : client, to: v6 ? server6 : server, seq: 1234, ack: 99,
                          flags: [.ack, .psh], payload: payload)
    }

    /// A decoded packet with its payload copied out of libpcap's buffer.
    struct Decoded {
        var verdict: PacketVerdict
        var payload: [UInt8]
    }

    /// Writes `packets` with `link`, reads them back and decodes each.
    static func roundTrip(_ packets: [[UInt8]], link: LinkType, filter: String? = nil) throws -> [Decoded] {
        let path = TestEnvironment.temporaryDirectory("pcap-link").appendingPathComponent("x.pcap").path
        let writer = try PcapWriter(path: path, link: link)
        for (i, packet) in packets.enumerated() { writer.write(packet, time: 1_700_000_000_000_000 + Int64(i)) }
        writer.close()
        let reader = try PcapReader(path: path, filter: filter)
        #expect(reader.linkType == link)
        var verdicts: [Decoded] = []
        while let packet = try reader.next() {
            let verdict = PacketDecoder.decode(packet.bytes, link: link)
            var payload: [UInt8] = []
            if case .tcp(let segment) = verdict { payload = Array(segment.payload) }
            verdicts.append(Decoded(verdict: verdict, payload: payload))
        }
        return verdicts
    }

    static func expectHello(_ decoded: Decoded?, v6: Bool = false) {
        guard case .tcp(let segment) = decoded?.verdict else {
            Issue.record("expected a TCP segment, got \(String(describing: decoded?.verdict))")
            return
        }
        #expect(segment.source == (v6 ? client6 : client))
        #expect(segment.destination == (v6 ? server6 : server))
        #expect(segment.seq == 1234)
        #expect(segment.ack == 99)
        #expect(segment.flags == [.ack, .psh])
        #expect(decoded?.payload == Array("hello".utf8))
        #expect(segment.missing == 0)
    }

    static func ethernet(_ ip: [UInt8], tags: [UInt16] = []) -> [UInt8] {
        var frame: [UInt8] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]
        for (i, tag) in tags.enumerated() {
            frame += i == 0 && tags.count > 1 ? [0x88, 0xA8] : [0x81, 0x00]
            frame += [UInt8(tag >> 8), UInt8(tag & 0xFF)]
        }
        frame += ip[0] >> 4 == 6 ? [0x86, 0xDD] : [0x08, 0x00]
        // Ethernet pads short frames to 60 bytes: the IP length must trim it.
        var out = frame + ip
        while out.count < 60 { out.append(0) }
        return out
    }

    @Test func ethernetIPv4WithPadding() throws {
        Self.expectHello(try Self.roundTrip([Self.ethernet(Self.ip())], link: .ethernet).first)
    }

    @Test func ethernetVLANAndQinQ() throws {
        let verdicts = try Self.roundTrip([Self.ethernet(Self.ip(), tags: [100]),
                                           Self.ethernet(Self.ip(v6: true), tags: [200, 300])], link: .ethernet)
        Self.expectHello(verdicts.first)
        Self.expectHello(verdicts.last, v6: true)
    }

    @Test func linuxCookedSLLAndSLL2() throws {
        var sll: [UInt8] = [0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]
        sll += [0x08, 0x00]
        Self.expectHello(try Self.roundTrip([sll + Self.ip()], link: .linuxSLL).first)
        var sll2: [UInt8] = [0x86, 0xDD, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6]
        sll2 += [2, 0, 0, 0, 0, 1, 0, 0]
        Self.expectHello(try Self.roundTrip([sll2 + Self.ip(v6: true)], link: .linuxSLL2).first, v6: true)
    }

    @Test func bsdNullAndLoop() throws {
        let v4Little: [UInt8] = [2, 0, 0, 0], v6Little: [UInt8] = [30, 0, 0, 0]
        let verdicts = try Self.roundTrip([v4Little + Self.ip(), v6Little + Self.ip(v6: true)], link: .null)
        Self.expectHello(verdicts.first)
        Self.expectHello(verdicts.last, v6: true)
        Self.expectHello(try Self.roundTrip([[0, 0, 0, 2] + Self.ip()], link: .loop).first)
    }

    @Test func rawIPBothVersions() throws {
        let verdicts = try Self.roundTrip([Self.ip(), Self.ip(v6: true)], link: .raw)
        Self.expectHello(verdicts.first)
        Self.expectHello(verdicts.last, v6: true)
    }

    @Test func ipv6ExtensionHeadersAreSkipped() throws {
        var packet = Self.ip(v6: true)
        // Insert a hop-by-hop (8 bytes) and a destination-options header (16 bytes).
        let tcp = Array(packet[40...])
        packet = Array(packet[..<40])
        packet[6] = 0  // next: hop-by-hop
        packet += [60, 0, 1, 4, 0, 0, 0, 0]                       // next: destination options
        packet += [6, 1, 1, 12] + [UInt8](repeating: 0, count: 12) // next: TCP
        packet += tcp
        PacketBuilder.put16(&packet, 4, UInt16(packet.count - 40))
        Self.expectHello(try Self.roundTrip([packet], link: .raw).first, v6: true)
    }

    @Test func ipv4FragmentsAreRecognised() throws {
        var first = Self.ip()
        first[6] = 0x20  // more fragments
        var later = Self.ip()
        later[6] = 0x00
        later[7] = 0x10  // offset 16 * 8
        for packet in [first, later] {
            guard case .fragment = try Self.roundTrip([packet], link: .raw).first?.verdict else {
                Issue.record("fragment not recognised")
                continue
            }
        }
    }

    @Test func snaplenCutIsReportedAsMissingBytes() throws {
        let packet = Self.ip(payload: Array(repeating: 0x41, count: 100))
        let cut = Array(packet[..<(packet.count - 60)])
        cut.withUnsafeBytes { raw in
            guard case .tcp(let s) = PacketDecoder.decode(raw, link: .raw) else {
                Issue.record("not decoded")
                return
            }
            #expect(s.payload.count == 40)
            #expect(s.missing == 60)
        }
    }

    @Test func bpfFilterSelectsPackets() throws {
        let other = PacketBuilder.tcp(from: Self.client, to: Endpoint(IPAddress("10.0.0.6")!, 9999), seq: 1, ack: 1,
                                      flags: [.ack], payload: [1])
        let verdicts = try Self.roundTrip([other, Self.ip(), other], link: .raw, filter: "tcp port 8080")
        #expect(verdicts.count == 1)
        Self.expectHello(verdicts.first)
    }

    @Test func badFilterIsAClearError() throws {
        let path = TestEnvironment.temporaryDirectory("pcap-filter").appendingPathComponent("x.pcap").path
        let writer = try PcapWriter(path: path, link: .raw)
        writer.close()
        do {
            _ = try PcapReader(path: path, filter: "tcp port banana")
            Issue.record("a bad filter was accepted")
        } catch {
            #expect(error.message.contains("--filter 'tcp port banana'"))
        }
    }

    @Test func notAPcapIsAClearError() throws {
        let path = TestEnvironment.temporaryDirectory("pcap-bad").appendingPathComponent("x.txt").path
        try Data("not a capture at all\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try PcapReader(path: path)
            Issue.record("a text file was accepted")
        } catch {
            #expect(error.message.hasPrefix(path))
        }
    }

    @Test func nanosecondStampsReadAsMicroseconds() throws {
        let dir = TestEnvironment.temporaryDirectory("pcap-nano")
        for nano in [false, true] {
            let path = dir.appendingPathComponent("\(nano).pcap").path
            let writer = try PcapWriter(path: path, link: .raw, nanoseconds: nano)
            writer.write(Self.ip(), time: 1_700_000_000_123_456, extraNanoseconds: nano ? 789 : 0)
            writer.close()
            let magic = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4)
            #expect(Array(magic) == (nano ? [0x4D, 0x3C, 0xB2, 0xA1] : [0xD4, 0xC3, 0xB2, 0xA1]))
            let packet = try PcapReader(path: path).next()
            #expect(packet?.time == 1_700_000_000_123_456)
        }
    }

    @Test func checksumsAreValid() {
        let packet = Self.ip()
        // The IPv4 header checksum over a correct header sums to zero.
        #expect(PacketBuilder.checksum(Array(packet[..<20]), []) == 0)
        let tcp = Array(packet[20...])
        let pseudo = Self.client.address.bytes + Self.server.address.bytes + [0, 6, 0, UInt8(tcp.count)]
        #expect(PacketBuilder.checksum(pseudo, tcp) == 0)
    }
}
