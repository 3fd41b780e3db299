import Capture
import Foundation
import Testing
import TestSupport
@testable import Pcap

/// A legal pcapng with several interfaces of one link layer reads whole, whichever link
/// type value libpcap keeps in memory; one whose interfaces have different link layers is
/// refused with a message that says so.
@Suite struct PcapngInterfacesTests {
    /// A pcapng written block by block: a section header, one Interface Description Block
    /// per entry of `interfaces` (link type, snapshot length), then each packet as an
    /// Enhanced Packet Block on the interface given.
    static func pcapng(interfaces: [(UInt16, UInt32)], packets: [(interface: UInt32, bytes: [UInt8])], bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
            return bigEndian ? b.reversed() : b
        }
        func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            let length = UInt32(12 + padded.count)
            return u32(type) + u32(length) + padded + u32(length)
        }
        var out = block(0x0A0D_0D0A, u32(0x1A2B_3C4D) + u16(1) + u16(0) + [UInt8](repeating: 0xFF, count: 8))
        for (linkType, snapshot) in interfaces { out += block(1, u16(linkType) + u16(0) + u32(snapshot)) }
        var micros: UInt64 = 1_700_000_000_000_000
        for packet in packets {
            micros += 1000
            out += block(6, u32(packet.interface) + u32(UInt32(micros >> 32)) + u32(UInt32(micros & 0xFFFF_FFFF))
                + u32(UInt32(packet.bytes.count)) + u32(UInt32(packet.bytes.count)) + packet.bytes)
        }
        return out
    }

    /// A WebSocket session's packets, as raw IP.
    static func session() -> [[UInt8]] {
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        for n in 0..<4 { c.text(fromClient: n % 2 == 0, "{\"event\":\"e\(n)\"}") }
        return b.packets.map(\.bytes)
    }

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = TestEnvironment.temporaryDirectory("pcapng-interfaces").appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func texts(_ path: String) throws -> [String] {
        var source = try PcapRecordSource(path: path, tool: "test")
        var texts: [String] = []
        while let record = try source.next() {
            if case .frame(let frame) = record { texts.append(String(decoding: frame.payload, as: UTF8.self)) }
        }
        return texts
    }

    @Test(arguments: [false, true])
    func twoRawIPInterfacesReadWhole(bigEndian: Bool) throws {
        // Packets alternate between the interfaces (a capture on two tunnel devices).
        let packets = Self.session().enumerated().map { (interface: UInt32($0.offset % 2), bytes: $0.element) }
        let path = try write(Self.pcapng(interfaces: [(101, 65535), (101, 262144)], packets: packets, bigEndian: bigEndian), "raw2.pcapng")
        #expect(try texts(path) == (0..<4).map { "{\"event\":\"e\($0)\"}" })
    }

    @Test func interfacesOfDifferentLinkLayersAreRefusedClearly() throws {
        let packets = Self.session().map { (interface: UInt32(0), bytes: $0) }
        let path = try write(Self.pcapng(interfaces: [(101, 65535), (1, 65535)], packets: packets), "mixed.pcapng")
        do {
            _ = try texts(path)
            Issue.record("a pcapng of two link layers was read")
        } catch let error as PcapError {
            #expect(error.message.contains("interface 1 has link type 1, interface 0 101"))
            #expect(error.message.contains("different link layers"))
        }
    }

    @Test func theFilterPassesAClassicPcapAndOddBlocksUntouched() {
        let classic: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1] + (0..<60).map { UInt8($0) }
        let odd = Self.pcapng(interfaces: [(101, 65535)], packets: []) + [1, 0, 0, 0, 7, 0, 0, 0, 9, 9]   // a length of 7
        for input in [classic, odd] {
            var filter = PcapngInterfaceTypes()
            var out: [UInt8] = []
            // Byte by byte: a header split anywhere is held until it is whole.
            for byte in input { [byte].withUnsafeBytes { filter.feed($0, into: &out) } }
            filter.finish(into: &out)
            #expect(out == input)
        }
    }

    /// Runs of whole blocks that pass unchanged are copied in one piece, blocks that need
    /// deciding byte-exactly: whatever sizes the reads come in, the filter gives the bytes
    /// it gives when fed one byte at a time (where no block is ever whole in one read),
    /// later interfaces rewritten and a second section's interfaces judged afresh.
    @Test(arguments: [false, true])
    func anyReadSizeGivesTheSameBytes(bigEndian: Bool) {
        let packets = Self.session().enumerated().map { (interface: UInt32($0.offset % 2), bytes: $0.element) }
        let section = Self.pcapng(interfaces: [(101, 65535), (101, 262144)], packets: packets, bigEndian: bigEndian)
        let input = section + section + [1, 0, 0, 0, 7, 0, 0, 0, 9, 9]   // two sections, then a block of length 7
        func filtered(readSize: Int) -> [UInt8] {
            var filter = PcapngInterfaceTypes()
            var out: [UInt8] = []
            var start = 0
            while start < input.count {
                let end = min(input.count, start + readSize)
                input[start..<end].withUnsafeBytes { filter.feed($0, into: &out) }
                start = end
            }
            filter.finish(into: &out)
            return out
        }
        let reference = filtered(readSize: 1)
        #expect(reference.count == input.count)
        #expect(reference != input, "the second interface is rewritten to the first one's values")
        for readSize in [2, 7, 8, 13, 64, 1000, input.count] {
            #expect(filtered(readSize: readSize) == reference, "reads of \(readSize) bytes")
        }
    }
}
