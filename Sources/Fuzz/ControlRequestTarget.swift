import ControlAPI

extension FuzzTarget {
    /// The control API's request reader fed the input in pieces, as a socket would.
    static let controlRequest = FuzzTarget(
        name: "control-request",
        summary: "ControlRequestReader (head, Content-Length body, Expect: 100-continue)") { input in
        guard let flags = input.first else { return }
        var reader = ControlRequestReader(maxHeadBytes: 4096, maxBodyBytes: 4096)
        var chunks = InputChunks(UnsafeRawBufferPointer(rebasing: input[1...]), seed: flags)
        while let chunk = chunks.next() {
            switch reader.feed(chunk) {
            case .needMore: continue
            case .request(let request):
                require(request.body.count <= 4096, "body over the limit")
                return
            case .reject: return
            }
        }
    }
}
