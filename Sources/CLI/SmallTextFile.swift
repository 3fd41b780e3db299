import Glibc

/// A small UTF-8 text file given on the command line (a fault plan, a forward route list, a
/// control token file), read whole, at most 16 MiB.
package enum SmallTextFile {
    /// The file's text, or an error naming it and why it cannot be read.
    package static func read(_ path: String) throws(UsageError) -> String {
        guard let file = fopen(path, "r") else {
            throw UsageError("\(path): cannot read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n > 0 { bytes += chunk[..<n] }
            if n < chunk.count { break }
            if bytes.count > 16 << 20 { throw UsageError("\(path): larger than 16 MiB; not a fault plan") }
        }
        if ferror(file) != 0 { throw UsageError("\(path): cannot read: \(String(cString: strerror(errno)))") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw UsageError("\(path): not UTF-8 text")
        }
        return text
    }
}
