import Sim
import Testing

@Suite struct SimAddressTests {
    @Test func urls() throws {
        let url = try SimURL.parse("ws://127.0.0.1:8080/app/k1")
        #expect(url.host == "127.0.0.1" && url.port == 8080 && url.appKey == "k1")
        #expect(url.target == "/app/k1?protocol=7&client=faultline-sim&version=\(SimURL.clientVersion)")
        #expect(url.hostHeader == "127.0.0.1:8080")
        let v6 = try SimURL.parse("ws://[::1]:9000/app/k2?protocol=7")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.target == "/app/k2?protocol=7" && v6.hostHeader == "[::1]:9000")
        let plain = try SimURL.parse("ws://example.com/app/k3")
        #expect(plain.port == 80 && plain.hostHeader == "example.com")
        #expect(throws: SimURLError.self) { try SimURL.parse("wss://example.com/app/k") }
        #expect(throws: SimURLError.self) { try SimURL.parse("http://example.com/") }
        #expect(throws: SimURLError.self) { try SimURL.parse("ws://example.com:port/app/k") }
    }
}
