import Bird
import Testing

@Suite struct BirdAuthSigningTests {
    /// RFC 4231 test case 2: key "Jefe".
    @Test func hmacMatchesRFC4231() {
        #expect(BirdAuth.hmacSHA256Hex(key: "Jefe", message: "what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// Pusher's documented example: key 278d425bdf160c739803, secret 7ad3773142a6692b25b8.
    @Test func channelAuthMatchesPusherDocs() {
        let auth = BirdAuth.channelAuth(appKey: "278d425bdf160c739803", secret: "7ad3773142a6692b25b8",
                                       socketID: "1234.1234", channel: "private-foobar")
        #expect(auth == "278d425bdf160c739803:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4")
    }

    @Test func presenceSignsChannelData() {
        let plain = BirdAuth.channelAuth(appKey: "k", secret: "s", socketID: "1.2", channel: "presence-x")
        let withData = BirdAuth.channelAuth(appKey: "k", secret: "s", socketID: "1.2", channel: "presence-x", channelData: "{}")
        #expect(plain != withData)
        #expect(withData == "k:" + BirdAuth.hmacSHA256Hex(key: "s", message: "1.2:presence-x:{}"))
        #expect(BirdAuth.signinAuth(appKey: "k", secret: "s", socketID: "1.2", userData: "{\"id\":\"u\"}")
                == "k:" + BirdAuth.hmacSHA256Hex(key: "s", message: "1.2::user::{\"id\":\"u\"}"))
    }
}
