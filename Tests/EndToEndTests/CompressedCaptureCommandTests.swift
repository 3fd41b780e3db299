import Foundation
import Testing
import TestSupport

/// The built binary on zstd and gzip captures made by the real tools (files and standard
/// input), damaged ones (exit 2, a message naming file and offset), and a rotated
/// recording's parts, which `analyze` reads as one input.
struct CompressedCaptureCommandTests {
    static let sample = TestEnvironment.path("Captures/channels-stale-auth.jsonl")

    static func sh(_ script: String) throws -> (status: Int32?, stdout: String, stderr: String) {
        try runCommand("/bin/sh", ["-c", script])
    }

    static func quoted(_ path: String) -> String { "'\(path.replacingOccurrences(of: "'", with: "'\\''"))'" }

    @Test(arguments: ["zstd -q -c", "gzip -c"])
    func framesAndAnalyzeReadCompressedFilesAndStandardInput(compressor: String) throws {
        let dir = TestEnvironment.temporaryDirectory("compressed")
        let compressed = dir.appendingPathComponent("s.jsonl.z").path
        #expect(try Self.sh("\(compressor) \(Self.quoted(Self.sample)) > \(Self.quoted(compressed))").status == 0)
        let bin = Self.quoted(TestEnvironment.faultlineBinary)
        for command in ["frames --all", "analyze --format json"] {
            let plain = try Self.sh("\(bin) \(command) \(Self.quoted(Self.sample))")
            let fromFile = try Self.sh("\(bin) \(command) \(Self.quoted(compressed))")
            let fromStdin = try Self.sh("\(bin) \(command) - < \(Self.quoted(compressed))")
            let fromPipe = try Self.sh("cat \(Self.quoted(compressed)) | \(bin) \(command) -")
            #expect(!plain.stdout.isEmpty)
            for run in [fromFile, fromStdin, fromPipe] {
                #expect(run.status == plain.status, "\(command): \(run.stderr)")
                // analyze's JSON names its input; everything else is the same.
                #expect(run.stdout.replacingOccurrences(of: compressed, with: "X").replacingOccurrences(of: "\"-\"", with: "\"X\"")
                        == plain.stdout.replacingOccurrences(of: Self.sample, with: "X"))
            }
        }
    }

    @Test func corruptCompressedInputExitsTwoNamingFileAndOffset() throws {
        let dir = TestEnvironment.temporaryDirectory("compressed")
        let path = dir.appendingPathComponent("bad.jsonl.zst").path
        #expect(try Self.sh("zstd -q -c \(Self.quoted(Self.sample)) > \(Self.quoted(path))").status == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for i in (bytes.count / 2)..<(bytes.count / 2 + 16) { bytes[i] ^= 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for command in ["frames", "analyze", "export"] {
            var arguments = [command, path]
            if command == "export" { arguments += ["--pcap", dir.appendingPathComponent("out.pcap").path] }
            let run = try runFaultline(arguments)
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stderr.contains(path) && run.stderr.contains("corrupt zstd data (detected by byte"), "\(command): \(run.stderr)")
        }
    }

    /// The sample split into three parts of one recording (plain, zstd, gzip), given out of
    /// order: analyze reads them as one input, with the findings of the whole file, which
    /// need the timeline to continue across the parts (a stale auth reused after a reconnect).
    @Test func analyzeReadsARotatedRecordingAsOne() throws {
        let dir = TestEnvironment.temporaryDirectory("rotated")
        let lines = try String(contentsOfFile: Self.sample, encoding: .utf8).split(separator: "\n").map(String.init)
        let header = lines[0]
        let records = Array(lines.dropFirst())
        let third = records.count / 3
        let chunks = [Array(records[..<third]), Array(records[third..<(2 * third)]), Array(records[(2 * third)...])]
        var parts: [String] = []
        for (i, chunk) in chunks.enumerated() {
            let partHeader = String(header.dropLast()) + ",\"recording\":\"0123456789abcdef\",\"part\":\(i + 1)}"
            let plain = dir.appendingPathComponent("soak.000\(i + 1).jsonl").path
            try ([partHeader] + chunk).map { $0 + "\n" }.joined().write(toFile: plain, atomically: true, encoding: .utf8)
            switch i {
            case 1:
                #expect(try Self.sh("zstd -q --rm \(Self.quoted(plain)) -o \(Self.quoted(plain + ".zst"))").status == 0)
                parts.append(plain + ".zst")
            case 2:
                #expect(try Self.sh("gzip \(Self.quoted(plain))").status == 0)
                parts.append(plain + ".gz")
            default: parts.append(plain)
            }
        }
        func findings(_ run: (status: Int32?, stdout: String, stderr: String)) -> [String] {
            run.stdout.split(separator: "\n").map(String.init).filter { $0.contains("ERROR") || $0.contains("WARNING") || $0.hasPrefix("summary:") }
        }
        let whole = try runFaultline(["analyze", Self.sample])
        let set = try runFaultline(["analyze", parts[2], parts[0], parts[1]])
        #expect(whole.status == 1)
        #expect(set.status == whole.status, "\(set.stderr)")
        #expect(!findings(whole).isEmpty)
        #expect(findings(set) == findings(whole))
        #expect(!set.stdout.contains("missing"))
        // Without the middle part: said, and the timelines jump the gap.
        let gap = try runFaultline(["analyze", parts[0], parts[2]])
        #expect(gap.stdout.contains("part 2 is missing (between \(parts[0]) and \(parts[2]))"), "\(gap.stdout)")
    }
}
