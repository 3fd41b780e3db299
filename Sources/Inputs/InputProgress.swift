import CLI
import Foundation
import Glibc

/// How far reading an input's files has got, for `ProgressLine`: the read offset of the
/// descriptor this process holds on the file (Linux's /proc/self/fdinfo), of the file's
/// size. It works for every reader alike (captures, compressed ones: bytes of the
/// compressed file, pcaps read by libpcap) without any of them counting. A rotated
/// recording's parts count as one input: the parts before the open one are done.
package final class InputProgress {
    let paths: [String]
    let sizes: [Int64]
    /// The part last seen open; parts before it are read.
    var current = 0

    /// Nil for standard input and anything that is not a regular file (no total to show).
    package init?(_ paths: [String]) {
        var sizes: [Int64] = []
        var resolved: [String] = []
        for path in paths {
            var st = stat()
            guard path != "-", stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG,
                  let real = realpath(path, nil) else { return nil }
            resolved.append(String(cString: real))
            free(real)
            sizes.append(Int64(st.st_size))
        }
        self.paths = resolved
        self.sizes = sizes
    }

    package var total: Int64 { sizes.reduce(0, +) }

    /// Bytes read so far across the parts.
    package func done() -> Int64 {
        let open = Self.openOffsets()
        for index in current..<paths.count {
            if let offset = open[paths[index]] {
                current = index
                return sizes[..<index].reduce(0, +) + min(offset, sizes[index])
            }
        }
        return sizes[..<current].reduce(0, +)
    }

    /// A progress line for reading `paths` labelled `label`; nil when standard error is not
    /// a terminal or the input has no size.
    package static func line(_ label: String, reading paths: [String]) -> ProgressLine? {
        guard isatty(STDERR_FILENO) != 0, let progress = InputProgress(paths) else { return nil }
        return ProgressLine(label: label) { (progress.done(), progress.total) }
    }

    /// Every open descriptor's file and read offset (the largest, if a file is open twice).
    static func openOffsets() -> [String: Int64] {
        var result: [String: Int64] = [:]
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return result }
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("/"),
                  let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(name)", encoding: .utf8),
                  let line = info.split(separator: "\n").first(where: { $0.hasPrefix("pos:") }),
                  let offset = Int64(line.dropFirst(4).trimmingCharacters(in: .whitespaces)) else { continue }
            result[target] = max(result[target] ?? 0, offset)
        }
        return result
    }
}
