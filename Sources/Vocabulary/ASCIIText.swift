extension StringProtocol {
    /// Whether every UTF-8 byte of the string is ASCII, read from its storage where it has
    /// one (native strings and their substrings do): `utf8.allSatisfy` walks the view's
    /// iterator, some 30 instructions a byte where it is not specialized.
    ///
    /// Callers use it to take a byte-level fast path only where it gives the same answer as
    /// going by characters: beyond ASCII, a `:` or `&` followed by a combining mark is not a
    /// character of its own, and Unicode lowercasing can turn a non-ASCII letter into ASCII.
    public var isASCIIOnly: Bool {
        if let answer = utf8.withContiguousStorageIfAvailable({ Self.allASCII($0) }) { return answer }
        return utf8.allSatisfy { $0 < 0x80 }
    }

    private static func allASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        return high < 0x80
    }
}
