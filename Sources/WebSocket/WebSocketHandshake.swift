import COpenSSL
import Vocabulary

/// The opening handshake of RFC 6455 section 4: keys, the accept value, and the request
/// and 101 response that carry them.
public enum WebSocketHandshake {
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// base64(SHA-1(key + GUID)), via OpenSSL.
    public static func acceptKey(for key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = input.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha1(), nil)
        }
        precondition(ok == 1 && length == 20, "OpenSSL SHA-1 failed")
        return Base64.encode(Array(digest[0..<20]))
    }

    /// A fresh random Sec-WebSocket-Key (16 random bytes, base64).
    public static func makeKey<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let value = generator.next()
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
        }
        return Base64.encode(bytes)
    }

    /// A client's upgrade request for `target` on `host`, with any extra headers.
    public static func request(host: String, target: String, key: String, extraHeaders: [HeaderField] = []) -> HTTPRequestHead {
        HTTPRequestHead(method: "GET", target: target, headers: [
            HeaderField("Host", host),
            HeaderField("Upgrade", "websocket"),
            HeaderField("Connection", "Upgrade"),
            HeaderField("Sec-WebSocket-Key", key),
            HeaderField("Sec-WebSocket-Version", "13"),
        ] + extraHeaders)
    }

    /// The 101 response accepting `request` (echoes no extension unless given).
    public static func response(accepting request: HTTPRequestHead, extraHeaders: [HeaderField] = []) -> HTTPResponseHead {
        let key = request.headers.first(named: "Sec-WebSocket-Key")?.trimmingHTTPWhitespace() ?? ""
        return HTTPResponseHead(status: 101, reason: "Switching Protocols", headers: [
            HeaderField("Upgrade", "websocket"),
            HeaderField("Connection", "Upgrade"),
            HeaderField("Sec-WebSocket-Accept", acceptKey(for: key)),
        ] + extraHeaders)
    }

    /// Whether `response` accepts the request that sent `key`: status 101, the upgrade
    /// headers, and the right Sec-WebSocket-Accept. Nil when it does, else what is wrong.
    public static func problem(with response: HTTPResponseHead, forKey key: String) -> String? {
        guard response.status == 101 else { return "status \(response.status) (expected 101)" }
        guard response.headers.containsToken("websocket", inHeadersNamed: "Upgrade") else {
            return "missing Upgrade: websocket"
        }
        guard response.headers.containsToken("upgrade", inHeadersNamed: "Connection") else {
            return "missing Connection: Upgrade"
        }
        let expected = acceptKey(for: key)
        guard let accept = response.headers.first(named: "Sec-WebSocket-Accept")?.trimmingHTTPWhitespace() else {
            return "missing Sec-WebSocket-Accept"
        }
        guard accept == expected else { return "Sec-WebSocket-Accept \(accept) (expected \(expected))" }
        return nil
    }
}
