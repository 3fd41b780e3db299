import Glibc
import Vocabulary
import WebSocket
import Testing
@testable import Pcap

@Suite struct EndpointTests {
    /// The libc spelling the capture format has always used.
    static func reference(_ endpoint: Endpoint) -> String {
        var raw = in_addr(s_addr: UInt32(truncatingIfNeeded: endpoint.address.low).bigEndian)
        var out = [CChar](repeating: 0, count: 64)
        _ = inet_ntop(AF_INET, &raw, &out, 64)
        let host = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(endpoint.port)"
    }

    @Test func ipv4IsWrittenAsLibcWritesItAndParsesBack() {
        var generator = SeededGenerator(seed: 3)
        var endpoints = [Endpoint(IPAddress(ipv4: 0), 0), Endpoint(IPAddress(ipv4: .max), .max),
                         Endpoint(IPAddress(ipv4: 0x0A00_0001), 9), Endpoint(IPAddress(ipv4: 0x6400_0A63), 10)]
        for _ in 0..<2000 {
            endpoints.append(Endpoint(IPAddress(ipv4: UInt32.random(in: 0...UInt32.max, using: &generator)),
                                      UInt16.random(in: 0...UInt16.max, using: &generator)))
        }
        for endpoint in endpoints {
            #expect(endpoint.description == Self.reference(endpoint))
            #expect(Endpoint(parsing: endpoint.description) == endpoint)
        }
    }

    @Test func ipv6IsBracketed() {
        let endpoint = Endpoint(IPAddress("2001:db8::1")!, 443)
        #expect(endpoint.description == "[2001:db8::1]:443")
        #expect(Endpoint(parsing: endpoint.description) == endpoint)
    }
}
