import Foundation
import Testing
import TestSupport

/// `faultline completions bash|zsh|fish` and `faultline help --man`, run by the real shells
/// and man: bash completes through the registered function, fish through `complete -C`,
/// zsh parses the file and registers it with compinit, and groff renders the page without
/// a warning.
@Suite struct CompletionManTests {
    func script(_ shell: String) throws -> String {
        let result = try runFaultline(["completions", shell])
        #expect(result.status == 0, "\(result.stderr)")
        let file = TestEnvironment.temporaryDirectory("completions").appendingPathComponent(shell == "zsh" ? "_faultline" : "faultline.\(shell)").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data((result.stdout + "\n").utf8)))
        return file
    }

    /// Runs `shell ARGUMENTS` and returns its output lines in groups, split at lines `--`.
    func run(_ shell: String, _ arguments: [String]) throws -> [[String]] {
        let result = try runCommand(shell, arguments)
        #expect(result.status == 0, "\(shell): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(shell): \(result.stderr)")
        var groups: [[String]] = [[]]
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "--" { groups.append([]) } else if !line.isEmpty { groups[groups.count - 1].append(String(line)) }
        }
        return groups
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        let file = try script("bash")
        let dir = TestEnvironment.temporaryDirectory("completions-files")
        #expect(FileManager.default.createFile(atPath: dir.appendingPathComponent("cap.jsonl").path, contents: Data()))
        // Each case: the words typed, the last one being completed.
        let cases = ["faultline an", "faultline analyze --fo", "faultline analyze --format j",
                     "faultline sim ", "faultline sim server --pre", "faultline sim server --prefix p",
                     "faultline analyze ca", "faultline proxy --listen ", "faultline help si", "faultline completions "]
        var program = "cd \(dir.path) && source \(file) && complete -p faultline && echo --\n"
        for words in cases {
            let parts = words.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }
            program += "COMP_WORDS=(\(parts.joined(separator: " "))); COMP_CWORD=\(parts.count - 1); _faultline; printf '%s\\n' \"${COMPREPLY[@]}\"; echo --\n"
        }
        let out = try run("/bin/bash", ["--norc", "-c", program])
        let got = out.map { $0.sorted() }
        try #require(got.count == cases.count + 2, "\(out)")
        #expect(got[0] == ["complete -o filenames -F _faultline faultline"])
        #expect(got[1] == ["analyze"])
        #expect(got[2] == ["--format"])
        #expect(got[3] == ["json", "junit"])
        #expect(got[4] == ["--help", "client", "server"])
        #expect(got[5] == ["--prefix"])
        #expect(got[6] == [], "a free value (any server's prefix) offers nothing")
        #expect(got[7] == ["cap.jsonl"], "positional arguments complete files")
        #expect(got[8] == [], "an address has no completion")
        #expect(got[9] == ["sim"])
        #expect(got[10] == ["bash", "fish", "zsh"], "a positional with choices offers them")
    }

    @Test func fishCompletesCommandsOptionsAndValues() throws {
        let file = try script("fish")
        func completions(_ line: String) throws -> [String] {
            let out = try run("/usr/bin/fish", ["--no-config", "-c", "source \(file); complete -C'\(line)'"])
            return out[0].map { String($0.split(separator: "\t")[0]) }.sorted()
        }
        #expect(try completions("faultline an") == ["analyze"])
        #expect(try completions("faultline analyze --format j") == ["json", "junit"])
        #expect(try completions("faultline sim ") == ["client", "server"])
        #expect(try completions("faultline sim server --pre") == ["--prefix"])
        #expect(try completions("faultline help si") == ["sim"])
        #expect(try completions("faultline completions ") == ["bash", "fish", "zsh"])
    }

    @Test func zshParsesAndRegistersTheFunction() throws {
        let file = try script("zsh")
        _ = try run("/usr/bin/zsh", ["-n", file])
        let dump = TestEnvironment.temporaryDirectory("zcompdump").appendingPathComponent("dump").path
        let out = try run("/usr/bin/zsh", ["-f", "-c", "autoload -U compinit && compinit -u -d \(dump) && source \(file) && print -r -- $_comps[faultline]"])
        #expect(out[0] == ["_faultline"])
    }

    @Test func manPageRendersEveryCommandWithoutWarnings() throws {
        let result = try runFaultline(["help", "--man"])
        #expect(result.status == 0)
        let page = TestEnvironment.temporaryDirectory("man").appendingPathComponent("faultline.1").path
        #expect(FileManager.default.createFile(atPath: page, contents: Data((result.stdout + "\n").utf8)))
        let check = try runCommand("/usr/bin/groff", ["-man", "-ww", "-z", page])
        #expect(check.status == 0 && check.stderr.isEmpty, "groff: \(check.stderr)")
        // man's output goes to a file: read from a pipe it could be cut at the end of the
        // bounded drain on a loaded machine.
        let rendered = page + ".txt"
        let man = try runCommand("/bin/sh", ["-c", "MANWIDTH=100 man -l \"$0\" > \"$1\"", page, rendered])
        #expect(man.status == 0, "\(man.stderr)")
        let text = try String(contentsOfFile: rendered, encoding: .utf8)
        for heading in ["NAME", "SYNOPSIS", "COMMANDS", "ENVIRONMENT", "faultline proxy", "faultline sim server",
                        "faultline completions", "--upstream url", "FAULTLINE_SPECS"] {
            #expect(text.contains(heading), "\(heading) in: \(text)")
        }
    }
}
