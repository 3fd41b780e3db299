import Glibc

/// The libFuzzer entry points, and (in a normal build) a driver that replays inputs.
///
/// Built with `swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING` (see
/// `Tools/fuzz`), libFuzzer supplies `main` and calls `LLVMFuzzerTestOneInput` for each
/// input; `FAULTLINE_FUZZ_TARGET` names the target. In a normal build this file's `main`
/// replays files instead: `faultline-fuzz TARGET PATH...` runs every file given (or found
/// under a directory) through the target, which is how `Tools/test` replays the seed
/// corpora and the regression inputs without an instrumented build.

nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let name = getenv("FAULTLINE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        printError("faultline-fuzz: set FAULTLINE_FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    selected = target
    return 0
}

/// A line on standard error (the C global `stderr` is not concurrency-safe in Swift 6).
func printError(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selected?.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

#if !FUZZING
@main
enum ReplayDriver {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--list" {
            for target in FuzzTarget.all { print("\(target.name)  \(target.summary)") }
            return
        }
        guard arguments.count >= 1, let target = FuzzTarget.named(arguments.removeFirst()) else {
            printError("usage: faultline-fuzz TARGET FILE|DIR... | --list (targets: \(FuzzTarget.all.map(\.name).joined(separator: ", ")))")
            exit(2)
        }
        var count = 0
        for path in arguments.flatMap(files(under:)) {
            guard let bytes = read(path) else { printError("faultline-fuzz: cannot read \(path)"); exit(2) }
            bytes.withUnsafeBytes { target.run($0) }
            count += 1
        }
        print("\(target.name): \(count) inputs replayed, no crash")
    }

    /// `path` itself, or every regular file under it (sorted), for a directory.
    static func files(under path: String) -> [String] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [path] }
        guard st.st_mode & S_IFMT == S_IFDIR else { return [path] }
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted().flatMap { files(under: path + "/" + $0) }
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return out
    }
}
#endif
