import WebSocket

extension FuzzTarget {
    /// The same bytes as an upgrade request and as an upgrade response, arriving in pieces;
    /// a parsed head's headers go through the extension negotiation as the pcap reader's do.
    static let httpHead = FuzzTarget(
        name: "http-head",
        summary: "HTTPHeadParser (request and response) + permessage-deflate negotiation") { input in
        guard let flags = input.first else { return }
        var request = HTTPHeadParser(maxHeadBytes: 4096)
        var response = HTTPHeadParser(maxHeadBytes: 4096)
        var requestDone = false, responseDone = false
        var chunks = InputChunks(UnsafeRawBufferPointer(rebasing: input[1...]), seed: flags)
        while let chunk = chunks.next(), !(requestDone && responseDone) {
            if !requestDone {
                request.append(chunk)
                do {
                    if let head = try request.parseRequest() {
                        requestDone = true
                        _ = head.headers.first(named: "upgrade")
                        _ = DeflateParameters.negotiated(in: head.headers)
                        _ = request.remainder
                    }
                } catch {
                    requestDone = true
                }
            }
            if !responseDone {
                response.append(chunk)
                do {
                    if let head = try response.parseResponse() {
                        responseDone = true
                        require((0...999).contains(head.status), "status \(head.status) is not three digits")
                        _ = DeflateParameters.negotiated(in: head.headers)
                        _ = response.remainder
                    }
                } catch {
                    responseDone = true
                }
            }
        }
    }
}
