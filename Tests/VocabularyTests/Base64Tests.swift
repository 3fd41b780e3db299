import Testing
import Vocabulary

@Suite struct Base64Tests {
    @Test("RFC 4648 section 10 vectors", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func vectors(_ plain: String, _ encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
    }

    @Test func roundTripsEveryLengthAndByte() {
        var rng = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
    }

    @Test("rejects malformed text", arguments: ["A", "AB=", "A===", "Zm9v!A==", "Zg==Zg==", "=Zg="])
    func rejects(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
