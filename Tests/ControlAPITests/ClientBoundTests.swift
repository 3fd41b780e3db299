import ControlAPI
import Foundation
import Glibc
import Testing

/// The control client reads at most `maxResponseBody` bytes of an answer, whatever the
/// peer sends or announces, and says why it stopped.
@Suite struct ClientBoundTests {
    /// A listening socket on an ephemeral loopback port that answers one connection with
    /// `response` repeated `times` times, then closes. Returns the port; the thread ends
    /// with the connection.
    static func serveOnce(head: String, filler: [UInt8], times: Int) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread {
            defer { close(fd) }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            var request = [UInt8](repeating: 0, count: 4096)
            _ = recv(client, &request, request.count, 0)
            let headBytes = Array(head.utf8)
            guard send(client, headBytes, headBytes.count, Int32(MSG_NOSIGNAL)) == headBytes.count else { return }
            for _ in 0..<times where send(client, filler, filler.count, Int32(MSG_NOSIGNAL)) == filler.count {}
        }
        thread.start()
        return port
    }

    @Test func aBodyWithoutLengthStopsAtTheBound() throws {
        let port = try Self.serveOnce(head: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
                                      filler: [UInt8](repeating: 65, count: 4096), times: 64)
        var client = try ControlClient(address: "127.0.0.1:\(port)", timeout: 10)
        client.maxResponseBody = 16 * 1024
        #expect {
            _ = try client.send("GET", "/metrics")
        } throws: { error in
            "\(error)".contains("has a body of more than 16384 bytes")
        }
    }

    @Test func anAnnouncedLengthOverTheBoundIsRefusedAtOnce() throws {
        let port = try Self.serveOnce(head: "HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n",
                                      filler: [], times: 0)
        #expect {
            _ = try ControlClient(address: "127.0.0.1:\(port)", timeout: 10).send("GET", "/rules")
        } throws: { error in
            "\(error)".contains("999999999999 announced or read")
        }
    }

    @Test func anAnswerWithinTheBoundIsReadWhole() throws {
        let port = try Self.serveOnce(head: "HTTP/1.1 200 OK\r\nContent-Length: 8192\r\n\r\n",
                                      filler: [UInt8](repeating: 66, count: 4096), times: 2)
        var client = try ControlClient(address: "127.0.0.1:\(port)", timeout: 10)
        client.maxResponseBody = 8192
        let response = try client.send("GET", "/rules")
        #expect(response.body.count == 8192)
    }
}
