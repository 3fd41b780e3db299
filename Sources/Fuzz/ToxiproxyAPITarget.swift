import ControlAPI
import JSON
import ProxyShell
import Vocabulary
import WebSocket

extension FuzzTarget {
    /// The toxiproxy API's request handling: each input line is one request (`G`, `P` or
    /// `D` then a path, a space, and a body) to the router over a backend that checks what
    /// reaches it. A proxy created must have a safe name (its capture file keeps `.jsonl`
    /// and holds no control), an upstream that parses without controls, and a loopback
    /// listen unless remote listens were allowed (the flags byte's low bit); every toxic
    /// a safe name and a rule that parses. Every answer is JSON with nothing display-unsafe.
    static let toxiproxyAPI = FuzzTarget(
        name: "toxiproxy-api",
        summary: "ToxiproxyRouter: proxy and toxic names, upstream URLs, listen addresses, every answer") { input in
        guard let flags = input.first else { return }
        let allowRemote = flags & 1 == 1
        let router = ToxiproxyRouter(allowRemoteListens: allowRemote)
        let backend = CheckingToxiproxy(allowRemote: allowRemote)
        for line in UnsafeRawBufferPointer(rebasing: input[1...]).split(separator: 10).prefix(32) {
            guard let verb = line.first else { continue }
            let method = verb == UInt8(ascii: "P") ? "POST" : verb == UInt8(ascii: "D") ? "DELETE" : "GET"
            let rest = line.dropFirst()
            let space = rest.firstIndex(of: 32) ?? rest.endIndex
            let target = String(decoding: rest[..<space], as: UTF8.self)
            let body = space < rest.endIndex ? Array(rest[rest.index(after: space)...]) : []
            let request = ControlRequest(method: method, target: target.hasPrefix("/") ? target : "/" + target,
                                         headers: [HeaderField("Host", "127.0.0.1:8474")], body: body)
            let response = router.respond(to: request, backend: backend)
            require([200, 201, 204, 400, 404, 405, 409].contains(response.status), "status \(response.status)")
            guard response.status != 204 else { continue }
            let text = String(decoding: response.body, as: UTF8.self)
            require((try? JSONParser.parse(response.body)) != nil, "an answer that is not JSON: \(text)")
            require(!text.dropLast().unicodeScalars.contains(where: DisplayUnsafe.contains), "a display-unsafe character in an answer")
        }
    }
}

/// A toxiproxy backend that keeps proxies in memory and breaks an invariant loudly when the
/// router hands it something it must have refused.
private final class CheckingToxiproxy: ToxiproxyBackend {
    let allowRemote: Bool
    var table: [String: ToxiproxyProxy] = [:]
    let version = "faultline fuzz"

    init(allowRemote: Bool) { self.allowRemote = allowRemote }

    func proxies() -> [ToxiproxyProxy] { table.keys.sorted().compactMap { table[$0] } }

    func createProxy(name: String, listen: String, upstream: String, enabled: Bool) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        require(ToxiproxyNames.problem(name, what: "proxy") == nil, "an unsafe proxy name reached the backend")
        let file = ToxiproxyHost.capturePath("run/cap.jsonl", proxy: name, run: 2)
        require(file.hasSuffix(".jsonl") && file.hasPrefix("run/cap.") && !file.dropFirst(4).contains("/"),
                "proxy \(name) makes the capture \(file)")
        require(!file.unicodeScalars.contains(where: DisplayUnsafe.contains), "a control in a capture's file name")
        guard case .success(let url) = UpstreamURL.parse(upstream.contains("://") ? upstream : "ws://" + upstream) else {
            return .failure(.bad("upstream refused by the backend"))
        }
        require(!url.description.utf8.contains { $0 < 0x21 || $0 > 0x7E }, "upstream \(url) holds a control or a space")
        guard case .success(let address) = HostPort.parse(listen) else {
            fatalError("invariant broken: listen \(listen) reached the backend unparsed")
        }
        require(allowRemote || LoopbackHost.isLoopback(host: address.host), "a non-loopback listen \(listen) was let through")
        let proxy = ToxiproxyProxy(name: name, listen: listen, upstream: upstream, enabled: enabled)
        table[name] = proxy
        return .success(proxy)
    }

    func setEnabled(_ enabled: Bool, proxy name: String) -> Result<ToxiproxyProxy, ToxiproxyFailure> {
        table[name]?.enabled = enabled
        return table[name].map { .success($0) } ?? .failure(.notFound(name))
    }

    func deleteProxy(name: String) -> Bool { table.removeValue(forKey: name) != nil }

    func setToxics(_ toxics: [ToxiproxyToxic], proxy name: String) -> Result<Void, ToxiproxyFailure> {
        for toxic in toxics {
            require(ToxiproxyNames.problem(toxic.name, what: "toxic") == nil, "an unsafe toxic name reached the backend")
            require((try? toxic.rule().get()) != nil, "toxic \(toxic.name) reached the backend with a rule that does not parse")
        }
        table[name]?.toxics = toxics
        return .success(())
    }
}
