import COpenSSL
import JSON

/// Re-signs Bird/Pusher auth in frames a replay sends as the client, for the live socket
/// id: a recorded signature covers the recorded socket id, so a server that checks it
/// would refuse the replayed subscription. Needs the app secret (`--app-secret`), exactly
/// like the app's auth endpoint; without it the recorded signature goes out unchanged.
public struct AuthSigner: Sendable, Hashable {
    public var secret: String

    public init(secret: String) { self.secret = secret }

    /// `payload` with its `auth` replaced by a signature for `socketID`, when it is a
    /// `*:subscribe` to a private-/presence- channel or a `*:signin`; else unchanged.
    public func resign(_ payload: [UInt8], socketID: String) -> [UInt8] {
        guard let message = FrameMatcher.json(payload)?.objectValue, let event = message["event"]?.stringValue,
              let data = message["data"]?.objectValue, let auth = data["auth"]?.stringValue,
              let colon = auth.firstIndex(of: ":") else { return payload }
        let appKey = String(auth[..<colon])
        let text: String
        if event.hasSuffix(":subscribe"), let channel = data["channel"]?.stringValue,
           channel.hasPrefix("private-") || channel.hasPrefix("presence-") {
            let channelData = data["channel_data"]?.stringValue
            text = channelData.map { "\(socketID):\(channel):\($0)" } ?? "\(socketID):\(channel)"
        } else if event.hasSuffix(":signin"), let userData = data["user_data"]?.stringValue {
            text = "\(socketID)::user::\(userData)"
        } else {
            return payload
        }
        var newData = data
        newData["auth"] = .string(appKey + ":" + Self.hmacHex(secret: secret, text))
        var newMessage = message
        newMessage["data"] = .object(newData)
        var out: [UInt8] = []
        JSONWriter.write(.object(newMessage), into: &out)
        return out
    }

    /// Lower-case hex HMAC-SHA256, through OpenSSL's one-shot HMAC.
    static func hmacHex(secret: String, _ text: String) -> String {
        let key = Array(secret.utf8), message = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &digest, &length) != nil
        precondition(ok, "HMAC-SHA256 failed in OpenSSL")
        return digest.prefix(Int(length)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
