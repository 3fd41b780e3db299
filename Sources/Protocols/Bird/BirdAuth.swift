import COpenSSL
import JSON

/// HMAC-SHA256 signatures of the Bird/Pusher protocol: private and presence channel auth,
/// and user sign-in, written once. `analyze --app-secret` verifies with them, the
/// simulator signs and checks, a replay as the client re-signs for the live socket id, and
/// `synth` signs its synthetic subscriptions. A real client asks its app's auth endpoint,
/// which holds the secret; the simulator's clients sign themselves, a test shortcut.
public enum BirdAuth {
    /// hex(HMAC-SHA256(key, message)), lowercase, through OpenSSL's one-shot HMAC.
    public static func hmacSHA256Hex(key: String, message: String) -> String {
        let keyBytes = Array(key.utf8)
        let messageBytes = Array(message.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = keyBytes.withUnsafeBufferPointer { k in
            messageBytes.withUnsafeBufferPointer { m in
                digest.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, out.baseAddress, &length) != nil
                }
            }
        }
        precondition(ok, "HMAC-SHA256 failed in OpenSSL")
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(Int(length) * 2)
        for byte in digest.prefix(Int(length)) {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text a channel signature covers: "SOCKET_ID:CHANNEL" for private channels,
    /// "SOCKET_ID:CHANNEL:CHANNEL_DATA" for presence channels.
    public static func channelText(socketID: String, channel: String, channelData: String? = nil) -> String {
        if let channelData { return "\(socketID):\(channel):\(channelData)" }
        return "\(socketID):\(channel)"
    }

    /// The hex signature for a channel subscription.
    public static func channelSignature(secret: String, socketID: String, channel: String,
                                        channelData: String? = nil) -> String {
        hmacSHA256Hex(key: secret, message: channelText(socketID: socketID, channel: channel, channelData: channelData))
    }

    /// The hex signature for a sign-in: "SOCKET_ID::user::USER_DATA".
    public static func signinSignature(secret: String, socketID: String, userData: String) -> String {
        hmacSHA256Hex(key: secret, message: socketID + "::user::" + userData)
    }

    /// The full `auth` value, "APP_KEY:HEX_SIG".
    public static func authValue(appKey: String, signature: String) -> String {
        appKey + ":" + signature
    }

    /// `APP_KEY:HEX_SIG` for a private or presence subscription.
    public static func channelAuth(appKey: String, secret: String, socketID: String, channel: String,
                                   channelData: String? = nil) -> String {
        authValue(appKey: appKey, signature: channelSignature(secret: secret, socketID: socketID, channel: channel,
                                                              channelData: channelData))
    }

    /// `APP_KEY:HEX_SIG` for `P:signin`.
    public static func signinAuth(appKey: String, secret: String, socketID: String, userData: String) -> String {
        authValue(appKey: appKey, signature: signinSignature(secret: secret, socketID: socketID, userData: userData))
    }

    /// The signature part of an `auth` value (after the first colon), or nil.
    public static func signature(ofAuth auth: String) -> String? {
        guard let colon = auth.firstIndex(of: ":") else { return nil }
        return String(auth[auth.index(after: colon)...])
    }

    /// `payload` with its `auth` replaced by a signature for `socketID`, when it is a
    /// `*:subscribe` to a private-/presence- channel or a `*:signin`; else unchanged. A
    /// recorded signature covers the recorded socket id, so a server that checks it would
    /// refuse a replayed subscription; without the secret it goes out as recorded.
    public static func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8] {
        guard let message = (try? JSONParser.parse(payload))?.objectValue,
              let event = message["event"]?.stringValue,
              let data = message["data"]?.objectValue, let auth = data["auth"]?.stringValue,
              let colon = auth.firstIndex(of: ":") else { return payload }
        let appKey = String(auth[..<colon])
        let signature: String
        if event.hasSuffix(":subscribe"), let channel = data["channel"]?.stringValue,
           channel.hasPrefix("private-") || channel.hasPrefix("presence-") {
            signature = channelSignature(secret: secret, socketID: socketID, channel: channel,
                                         channelData: data["channel_data"]?.stringValue)
        } else if event.hasSuffix(":signin"), let userData = data["user_data"]?.stringValue {
            signature = signinSignature(secret: secret, socketID: socketID, userData: userData)
        } else {
            return payload
        }
        var newData = data
        newData["auth"] = .string(authValue(appKey: appKey, signature: signature))
        var newMessage = message
        newMessage["data"] = .object(newData)
        var out: [UInt8] = []
        JSONWriter.write(.object(newMessage), into: &out)
        return out
    }
}
