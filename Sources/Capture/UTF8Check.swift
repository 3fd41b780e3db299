import Vocabulary

/// Whether bytes are well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, nothing
/// above U+10FFFF), without building a String. Decides between `text` and `b64` per frame.
enum UTF8Check {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    /// The codec's incremental validator (eight ASCII bytes at a time), fed once.
    static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var validator = UTF8Validator()
        return validator.feed(b) && validator.isComplete
    }
}
