import Foundation
import Testing
@testable import Vocabulary

/// `Base64Text`, the one-pass encoder behind `Base64.encode(_:into:)`, against the plain
/// reference encoder and Foundation: every length 0...200 (all tail cases of the 12-, 6-
/// and 3-byte loops), long random inputs, both of its paths (the direct store that
/// `Array.append(contentsOf:)` takes, and plain iteration), and appends into arrays whose
/// spare capacity is none, exactly the text, or more.
@Suite struct Base64TextTests {
    typealias Generator = Base64FastPathTests.Generator

    static func random(_ count: Int, _ rng: inout Generator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func foundation(_ bytes: [UInt8]) -> [UInt8] {
        Array(Data(bytes).base64EncodedString().utf8)
    }

    /// Every way of getting the text out of `Base64Text`, each compared with the reference.
    static func check(_ bytes: [UInt8]) {
        let expected = Base64FastPathTests.reference(bytes)
        #expect(expected == foundation(bytes), "reference vs Foundation, length \(bytes.count)")
        bytes.withUnsafeBufferPointer { input in
            let text = Base64Text(input)
            #expect(text.underestimatedCount == expected.count)
            // The direct path: append reserves the exact count and stores in place.
            var appended: [UInt8] = []
            appended.append(contentsOf: text)
            #expect(appended == expected, "append, length \(bytes.count)")
            // The element-by-element path.
            var iterated: [UInt8] = []
            for byte in text { iterated.append(byte) }
            #expect(iterated == expected, "iteration, length \(bytes.count)")
            // Through the public entry point, after a prefix.
            var out: [UInt8] = [0x7B]
            Base64.encode(input, into: &out)
            #expect(out == [0x7B] + expected, "encode(into:), length \(bytes.count)")
        }
    }

    @Test func everyLengthUpTo200MatchesReferenceAndFoundation() {
        var rng = Generator(state: 11)
        for length in 0...200 {
            for _ in 0..<5 { Self.check(Self.random(length, &rng)) }
        }
    }

    @Test func longRandomInputsMatch() {
        var rng = Generator(state: 12)
        for length in [1000, 4095, 4096, 4097, 16384, 16385, 16386, 65536 + 7, 300_001] {
            Self.check(Self.random(length, &rng))
        }
    }

    @Test func extremeByteValues() {
        for length in [1, 2, 3, 11, 12, 13, 14, 15, 26, 27] {
            Self.check([UInt8](repeating: 0, count: length))
            Self.check([UInt8](repeating: 0xFF, count: length))
        }
    }

    /// Spare capacity none, exactly the text's length, and more: `append` hands
    /// `_copyContents` buffers of each size, and the bytes after the prefix must be the text.
    @Test func appendsWhateverTheSpareCapacity() {
        var rng = Generator(state: 13)
        for length in [1, 2, 3, 14, 100, 16384] {
            let bytes = Self.random(length, &rng)
            let expected = Base64FastPathTests.reference(bytes)
            for spare in [0, expected.count, expected.count + 1, 3 * expected.count] {
                var out = [UInt8](repeating: 0x41, count: 5)
                out.reserveCapacity(5 + spare)
                bytes.withUnsafeBufferPointer { out.append(contentsOf: Base64Text($0)) }
                #expect(out == [UInt8](repeating: 0x41, count: 5) + expected, "length \(length), spare \(spare)")
            }
        }
    }

    /// A buffer too small for the whole text (no caller of the standard library passes one,
    /// but `_copyContents` must still be correct): it is filled, and the iterator holds the rest.
    @Test func copyIntoATooSmallBufferLeavesTheRestToTheIterator() {
        var rng = Generator(state: 14)
        let bytes = Self.random(50, &rng)
        let expected = Base64FastPathTests.reference(bytes)
        bytes.withUnsafeBufferPointer { input in
            for size in [0, 1, 10, expected.count - 1] {
                let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: size)
                defer { storage.deallocate() }
                var (rest, end) = Base64Text(input)._copyContents(initializing: storage)
                #expect(end == size)
                var all = Array(storage[0..<end])
                while let byte = rest.next() { all.append(byte) }
                #expect(all == expected, "buffer of \(size)")
            }
        }
    }

}
