import COpenSSL

/// The signatures of `bird-protocol.md`: hex(HMAC-SHA256(secret, text)) prefixed with the
/// app key. The server checks them; the reference client makes them itself with the app
/// secret, a test shortcut standing in for the app's auth endpoint (a real client asks its
/// backend, which holds the secret).
public enum SimAuth {
    /// Lowercase hex of HMAC-SHA256(key: secret, message: text), via OpenSSL.
    public static func hmacHex(secret: String, _ text: String) -> String {
        let key = Array(secret.utf8)
        let message = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                digest.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(key.count), messageBytes.baseAddress,
                         message.count, out.baseAddress, &length) != nil
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

    /// The text a channel signature covers: "SOCKET_ID:CHANNEL" or, for presence channels,
    /// "SOCKET_ID:CHANNEL:CHANNEL_DATA".
    public static func channelText(socketID: String, channel: String, channelData: String?) -> String {
        if let channelData { return "\(socketID):\(channel):\(channelData)" }
        return "\(socketID):\(channel)"
    }

    /// `APP_KEY:HEX_SIG` for a private or presence subscription.
    public static func channelAuth(appKey: String, secret: String, socketID: String, channel: String,
                                   channelData: String? = nil) -> String {
        "\(appKey):" + hmacHex(secret: secret, channelText(socketID: socketID, channel: channel, channelData: channelData))
    }

    /// `APP_KEY:HEX_SIG` for `P:signin`, over "SOCKET_ID::user::USER_DATA".
    public static func signinAuth(appKey: String, secret: String, socketID: String, userData: String) -> String {
        "\(appKey):" + hmacHex(secret: secret, "\(socketID)::user::\(userData)")
    }
}
