import Capture
import Foundation
import Testing
import TestSupport

/// A client that does not speak HTTP (here RESP, Redis's protocol, then raw bytes) is relayed
/// as plain TCP to a Python TCP echo server, so non-WebSocket proxies keep working.
@Suite(.serialized) struct PlainTCPProxyTests {
    static let client = """
        import socket, sys
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"*1\\r\\n$4\\r\\nPING\\r\\n" + bytes(range(256)))
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        print(data.hex())
        """

    @Test func nonHTTPBytesAreEchoedThroughTheProxy() throws {
        let rig = try ProxyRig(server: ["--mode", "tcp-echo"])
        let run = try runCommand(TestEnvironment.python, ["-c", Self.client, String(rig.proxyPort)], timeout: 60)
        #expect(run.status == 0, "client: \(run.stderr)")
        let sent = Array("*1\r\n$4\r\nPING\r\n".utf8) + (0...255).map { UInt8($0) }
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == sent.map { String(format: "%02x", $0) }.joined())
        let capture = try rig.stopProxy()
        #expect(capture.opens.count == 1)
        #expect(capture.frames.isEmpty && capture.upgrades.isEmpty)
        #expect(Set(capture.ends.map(\.side)) == [.client, .server])
        #expect(capture.ends.allSatisfy { $0.kind == .fin })
        let notes = capture.records.compactMap { if case .note(let n) = $0 { n.message } else { nil } }
        #expect(notes.contains { $0.contains("relaying plain TCP") })
        #expect(notes.contains("plain TCP relayed 270 bytes client to server, 270 server to client"))
    }
}
