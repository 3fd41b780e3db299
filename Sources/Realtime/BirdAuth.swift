import COpenSSL

/// HMAC-SHA256 signatures of the Bird/Pusher protocol: private and presence channel auth,
/// and user sign-in. Used by `analyze --app-secret` to verify, and by the simulator to sign.
public enum BirdAuth {
    /// hex(HMAC-SHA256(key, message)), lowercase.
    public static func hmacSHA256Hex(key: String, message: String) -> String {
        let keyBytes = Array(key.utf8)
        let messageBytes = Array(message.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        keyBytes.withUnsafeBufferPointer { k in
            messageBytes.withUnsafeBufferPointer { m in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &digest, &length)
            }
        }
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The hex signature for a channel subscription: "SOCKET_ID:CHANNEL" for private
    /// channels, "SOCKET_ID:CHANNEL:CHANNEL_DATA" for presence channels.
    public static func channelSignature(secret: String, socketID: String, channel: String,
                                        channelData: String? = nil) -> String {
        var message = socketID + ":" + channel
        if let channelData { message += ":" + channelData }
        return hmacSHA256Hex(key: secret, message: message)
    }

    /// The hex signature for a sign-in: "SOCKET_ID::user::USER_DATA".
    public static func signinSignature(secret: String, socketID: String, userData: String) -> String {
        hmacSHA256Hex(key: secret, message: socketID + "::user::" + userData)
    }

    /// The full `auth` value, "APP_KEY:HEX_SIG".
    public static func authValue(appKey: String, signature: String) -> String {
        appKey + ":" + signature
    }

    /// The signature part of an `auth` value (after the first colon), or nil.
    public static func signature(ofAuth auth: String) -> String? {
        guard let colon = auth.firstIndex(of: ":") else { return nil }
        return String(auth[auth.index(after: colon)...])
    }
}
