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

    /// What libpcap reads of `input` through `InterfaceTypeStream`, when the stream asks the
    /// filter for `readSize` bytes at a time (its stdio buffer's size).
    static func filtered(_ input: [UInt8], readSize: Int) -> [UInt8] {
        input.withUnsafeBytes { bytes -> [UInt8] in
            guard let file = fmemopen(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count, "rb"),
                  let (stream, _) = InterfaceTypeStream.wrap(file) else {
                Issue.record("could not open the stream")
                return []
            }
            defer { fclose(stream) }
            setvbuf(stream, nil, _IOFBF, readSize)
            var out: [UInt8] = []
            var byte: UInt8 = 0
            // One byte a call: each refill of the stream's buffer is one read of `readSize`.
            while fread(&byte, 1, 1, stream) == 1 { out.append(byte) }
            return out
        }
    }

    @Test func theFilterPassesAClassicPcapAndOddBlocksUntouched() {
        let classic: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1] + (0..<60).map { UInt8($0) }
        let odd = Self.pcapng(interfaces: [(101, 65535)], packets: []) + [1, 0, 0, 0, 7, 0, 0, 0, 9, 9]   // a length of 7
        for input in [classic, odd] {
            // Reads just past the longest header: a header cut anywhere is held until it is whole.
            for readSize in [1, 17, 19, 23, 4096] {
                #expect(Self.filtered(input, readSize: readSize) == input, "reads of \(readSize) bytes")
            }
        }
    }

    /// The filter works in place on each read, holding back a block header the read cut:
    /// whatever sizes the reads come in, the bytes are the same, later interfaces
    /// rewritten and a second section's interfaces judged afresh.
    @Test(arguments: [false, true])
    func anyReadSizeGivesTheSameBytes(bigEndian: Bool) {
        let packets = Self.session().enumerated().map { (interface: UInt32($0.offset % 2), bytes: $0.element) }
        let section = Self.pcapng(interfaces: [(101, 65535), (101, 262144)], packets: packets, bigEndian: bigEndian)
        let input = section + section + [1, 0, 0, 0, 7, 0, 0, 0, 9, 9]   // two sections, then a block of length 7
        // In each section, the second interface (after the 28-byte section header and the
        // 20-byte first interface) gets the DLT libpcap holds for LINKTYPE 101 (12) in its
        // bytes 8-9 and the first interface's snapshot length in its bytes 12-15.
        var expected = input
        for secondInterface in [48, section.count + 48] {
            expected.replaceSubrange(secondInterface + 8 ..< secondInterface + 10, with: bigEndian ? [0, 12] : [12, 0])
            expected.replaceSubrange(secondInterface + 12 ..< secondInterface + 16, with: input[28 + 12 ..< 28 + 16])
        }
        #expect(expected != input)
        for readSize in [1, 2, 7, 8, 13, 16, 17, 18, 20, 27, 31, 64, 1000, input.count, input.count + 1] {
            #expect(Self.filtered(input, readSize: readSize) == expected, "reads of \(readSize) bytes")
        }
    }
}
