import ControlAPI
import Testing
import WebSocket

/// The server's request reader on its own: bytes in any split, limits, refusals.
@Suite struct RequestReaderTests {
    let wire = Array("POST /rules?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nclose:4009".utf8)

    @Test func readsHeadAndBodyWhateverTheSplit() throws {
        for split in 0...wire.count {
            var reader = ControlRequestReader()
            var steps = [reader.feed(Array(wire[..<split]))]
            steps.append(reader.feed(Array(wire[split...])))
            let requests = steps.compactMap { step -> ControlRequest? in
                if case .request(let r) = step { r } else { nil }
            }
            #expect(requests.count == 1, "split at \(split)")
            let request = try #require(requests.first)
            #expect(request.method == "POST" && request.path == "/rules" && request.query == "x=1")
            #expect(request.body == Array("close:4009".utf8))
        }
    }

    @Test func bytesAfterTheBodyAreIgnored() {
        var reader = ControlRequestReader()
        guard case .request(let request) = reader.feed(wire + Array("GET / HTTP/1.1\r\n\r\n".utf8)) else {
            Issue.record("no request")
            return
        }
        #expect(request.body.count == 10)
        #expect(reader.feed(Array("more".utf8)) == .needMore(sendContinue: false))
    }

    @Test func limitsAndRefusals() {
        func status(_ text: String, maxBody: Int = 64) -> Int? {
            var reader = ControlRequestReader(maxHeadBytes: 256, maxBodyBytes: maxBody)
            if case .reject(let response) = reader.feed(Array(text.utf8)) { return response.status }
            return nil
        }
        #expect(status("POST /rules HTTP/1.1\r\nContent-Length: 65\r\n\r\n") == 413)
        #expect(status("POST /rules HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501)
        #expect(status("POST /rules HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400)
        #expect(status("POST /rules HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400)
        #expect(status("NONSENSE\r\n\r\n") == 400)
        #expect(status("GET /" + String(repeating: "a", count: 300) + " HTTP/1.1\r\n") == 431)
        #expect(status("POST /rules HTTP/1.1\r\nContent-Length: 64\r\n\r\n") == nil)
    }

    @Test func expectContinueIsAnsweredOnce() {
        var reader = ControlRequestReader()
        let head = "POST /rules HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        #expect(reader.feed(Array(head.utf8)) == .needMore(sendContinue: true))
        #expect(reader.feed(Array("dr".utf8)) == .needMore(sendContinue: false))
        guard case .request(let request) = reader.feed(Array("op\n".utf8)) else {
            Issue.record("no request")
            return
        }
        #expect(request.body == Array("drop\n".utf8))
    }
}
