import ControlAPI
import Faults
import Glibc
import JSON
import Testing
import Transport

/// The HTTP server on a real loop and socket, driven by the blocking `ControlClient`.
@Suite struct ServerTests {
    @Test func clientAndServerRoundTrip() throws {
        let backend = FakeBackend()
        let results = Shared<[ControlResponse]>([])
        try withServer(token: "tok", backend: backend) { port in
            do {
                let client = try ControlClient(address: "127.0.0.1:\(port)", token: "tok")
                let responses = [
                    try client.send("POST", "/rules", body: Array(#"{"rule":"close:4009,after=5s"}"#.utf8)),
                    try client.send("GET", "/rules"),
                    try client.send("POST", "/connections/1/apply", body: Array("drop".utf8), contentType: "text/plain"),
                    try client.send("GET", "/metrics"),
                    try client.send("DELETE", "/rules/1"),
                    try ControlClient(address: "127.0.0.1:\(port)", token: "nope").send("GET", "/rules"),
                    try client.send("POST", "/rules", body: Array("close:1005".utf8)),
                ]
                results.update { $0 = responses }
            } catch {
                Issue.record("client failed: \(error)")
            }
        }
        let responses = results.current
        try #require(responses.count == 7)
        #expect(responses.map(\.status) == [201, 200, 200, 200, 200, 401, 400])
        #expect(responses[1].jsonBody?["rules"]?.arrayValue?.first?["rule"]?.stringValue == "close:4009,after=5s")
        #expect(String(decoding: responses[3].body, as: UTF8.self).contains("faultline_rules 1\n"))
        #expect(responses[5].jsonBody?["error"]?.stringValue?.contains("wrong token") == true)
        #expect(responses[6].jsonBody?["error"]?.stringValue?.contains("1005") == true)
        #expect(responses.allSatisfy { $0.headers.first(named: "Connection") == "close" })
        #expect(backend.changed == [nil, 1, nil])
        #expect(backend.faultEngine.list().isEmpty)
    }

    @Test func slowSplitRequestAndExpectContinue() throws {
        let backend = FakeBackend()
        let answers = Shared<[String]>([])
        try withServer(backend: backend) { port in
            let fd = PosixClient.connect(port: port)
            defer { close(fd) }
            let body = "stall-pongs,for=2s"
            PosixClient.send(fd, "POST /rules HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n")
            PosixClient.send(fd, "Content-Length: \(body.utf8.count)\r\n\r\n")
            let interim = PosixClient.receive(fd, until: "\r\n\r\n")
            PosixClient.send(fd, String(body.prefix(5)))
            PosixClient.send(fd, String(body.dropFirst(5)))
            let rest = PosixClient.receiveAll(fd)
            answers.update { $0 = [interim, rest] }
        }
        let got = answers.current
        try #require(got.count == 2)
        #expect(got[0] == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(got[1].hasPrefix("HTTP/1.1 201 Created\r\n"))
        #expect(backend.faultEngine.list().map(\.rule.text) == ["stall-pongs,for=2s"])
    }

    @Test func idleClientIsCutOffAndOthersStillServed() throws {
        let backend = FakeBackend()
        let outcome = Shared<(idleEOF: Bool, status: Int?)>((false, nil))
        try withServer(backend: backend, configure: { $0.requestTimeout = 200_000 }) { port in
            let idle = PosixClient.connect(port: port)
            defer { close(idle) }
            PosixClient.send(idle, "GET /rules HTTP/1.1\r\n")   // never finishes its head
            let status = try? ControlClient(address: "127.0.0.1:\(port)").send("GET", "/health").status
            let eof = PosixClient.receiveAll(idle).isEmpty   // returns once the server closes it
            outcome.update { $0 = (eof, status) }
        }
        #expect(outcome.current.status == 200)
        #expect(outcome.current.idleEOF)
    }

    @Test func clientEndingBeforeItsRequestIsClosedAtOnce() throws {
        let backend = FakeBackend()
        let sawEOF = Shared<Bool?>(nil)
        try withServer(backend: backend) { port in   // default 10 s request timeout
            let fd = PosixClient.connect(port: port)
            defer { close(fd) }
            PosixClient.send(fd, "POST /reset HTTP/1.1\r\nContent-Length: 4\r\n\r\nab")
            shutdown(fd, Int32(SHUT_WR))
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, 0)   // 0: EOF; -1: the 5 s receive timeout
            sawEOF.update { $0 = n == 0 }
        }
        #expect(sawEOF.current == true, "the server did not close a connection whose client ended mid-request")
        #expect(backend.changed.isEmpty, "an incomplete request does nothing")
    }

    @Test func nonLoopbackRefusedUnlessAllowed() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        #expect(throws: ControlServerError.self) {
            try ControlServer.start(loop: loop, host: "0.0.0.0", port: 0, token: nil, backend: FakeBackend())
        }
        do {
            _ = try ControlServer.start(loop: loop, host: "0.0.0.0", port: 0, token: nil, backend: FakeBackend())
        } catch {
            #expect("\(error)".contains("--control-allow-remote"))
        }
        let remote = try ControlServer.start(loop: loop, host: "0.0.0.0", port: 0, token: "t", allowRemote: true, backend: FakeBackend())
        #expect(remote.port > 0)
        #expect(remote.router.loopbackOnly == false)
        remote.close()
        let local = try ControlServer.start(loop: loop, port: 0, token: nil, backend: FakeBackend())
        #expect(local.address == "127.0.0.1:\(local.port)")
        local.close()
    }

    @Test func unreachableProxyNamesTheAddress() throws {
        // Bind a port and close it, so nothing listens there.
        let loop = try EventLoop()
        let probe = try ControlServer.start(loop: loop, port: 0, token: nil, backend: FakeBackend())
        let port = probe.port
        probe.close()
        loop.close()
        let client = try ControlClient(address: "127.0.0.1:\(port)", timeout: 2)
        do {
            _ = try client.send("GET", "/health")
            Issue.record("a request to a closed port succeeded")
        } catch {
            guard case .unreachable(let message) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains("127.0.0.1:\(port)"))
            #expect(message.contains("connection refused") || message.contains("Connection refused"))
        }
        #expect(throws: ControlClientError.self) { try ControlClient(address: "nonsense") }
        #expect(throws: ControlClientError.self) { try ControlClient(address: "127.0.0.1:99999") }
    }
}

/// Raw socket helpers for requests the `ControlClient` would never send.
enum PosixClient {
    static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        usleep(20_000)   // let the server see each piece as its own read
    }

    static func receive(_ fd: Int32, until marker: String) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while !String(decoding: bytes, as: UTF8.self).hasSuffix(marker), recv(fd, &byte, 1, 0) == 1 { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Everything until EOF (or the 5 s receive timeout).
    static func receiveAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
