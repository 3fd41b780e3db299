import CLI
import Capture
import Glibc
import Vocabulary

/// Standard output through one 256 KiB buffer, written with write(2) when full: one write
/// per line would dominate on big captures. Lines are written into the buffer by pointer
/// (`ByteCursor`) after reserving their worst-case length once, so the per-frame path pays
/// no capacity or uniqueness check per byte.
package struct BufferedOutput {
    package static let capacity = 256 * 1024
    private var storage = [UInt8](repeating: 0, count: BufferedOutput.capacity)
    private var used = 0

    package init() {}

    /// Writes one piece of at most `maxBytes` bytes through `body`, which must not write
    /// more; a piece larger than the whole buffer goes out on its own.
    package mutating func write(maxBytes: Int, _ body: (inout ByteCursor) -> Void) {
        if used + maxBytes > Self.capacity { flush() }
        if maxBytes > Self.capacity {
            var large = [UInt8](repeating: 0, count: maxBytes)
            let count = large.withUnsafeMutableBufferPointer { buffer in
                var cursor = ByteCursor(buffer.baseAddress!)
                body(&cursor)
                return cursor.position - buffer.baseAddress!
            }
            large.withUnsafeBytes { Console.write(fd: STDOUT_FILENO, bytes: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            return
        }
        let start = used
        used = storage.withUnsafeMutableBufferPointer { buffer in
            var cursor = ByteCursor(buffer.baseAddress! + start)
            body(&cursor)
            precondition(cursor.position - buffer.baseAddress! <= start + maxBytes, "line longer than reserved")
            return cursor.position - buffer.baseAddress!
        }
    }

    /// Appends bytes built elsewhere (the text format's lines).
    package mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { source in
            write(maxBytes: source.count) { $0.bytes(source) }
        }
    }

    /// Takes back the last `n` bytes written if they are still in the buffer (to extend the
    /// line just written, as `frames --payload` does); false if they already went out.
    package mutating func unwrite(_ n: Int) -> Bool {
        guard used >= n else { return false }
        used -= n
        return true
    }

    /// Writes the buffered bytes as they are (they are UTF-8 already).
    package mutating func flush() {
        guard used > 0 else { return }
        let count = used
        storage.withUnsafeBytes { Console.write(fd: STDOUT_FILENO, bytes: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        used = 0
    }
}

/// A write position in memory reserved beforehand (see `BufferedOutput.write(maxBytes:)`).
package struct ByteCursor {
    private(set) var position: UnsafeMutablePointer<UInt8>

    package init(_ position: UnsafeMutablePointer<UInt8>) { self.position = position }

    package mutating func byte(_ value: UInt8) {
        position.pointee = value
        position += 1
    }

    package mutating func literal(_ text: StaticString) {
        position.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        position += text.utf8CodeUnitCount
    }

    package mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress else { return }
        position.update(from: base, count: source.count)
        position += source.count
    }

    package mutating func bool(_ value: Bool) { value ? literal("true") : literal("false") }

    /// At most 20 bytes (21 with a sign).
    package mutating func decimal<T: BinaryInteger>(_ value: T) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(UInt64(value.magnitude), minimumCount: 1)
    }

    /// Microseconds as seconds with six decimals ("12.000345"); at most 28 bytes.
    package mutating func seconds(_ t: Micros) {
        if t < 0 { byte(UInt8(ascii: "-")) }
        let magnitude = t.magnitude
        digits(magnitude / 1_000_000, minimumCount: 1)
        byte(UInt8(ascii: "."))
        digits(magnitude % 1_000_000, minimumCount: 6)
    }

    /// Counts the digits first, then fills them in from the last (division by a constant
    /// ten compiles to a multiplication), zero-padded on the left to `minimumCount`.
    private mutating func digits(_ value: UInt64, minimumCount: Int) {
        if value < 10 && minimumCount == 1 {
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var count = 1
        var limit: UInt64 = 10
        while count < 20 && value >= limit { count += 1; limit &*= 10 }
        count = max(count, minimumCount)
        var rest = value
        var index = count - 1
        while index >= 0 {
            position[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            index -= 1
        }
        position += count
    }
}
