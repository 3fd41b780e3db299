import CLI
import Foundation
import Testing

@Suite struct ArgumentParserTests {
    static let spec = CommandSpec(
        name: "proxy", abstract: "Relay and record.",
        arguments: [ArgumentSpec("input", help: "The input.", optional: true)],
        options: [
            OptionSpec("listen", value: "host:port", help: "Where to listen."),
            OptionSpec("format", value: "format", help: "Output format.", default: "text", choices: ["text", "json"]),
            OptionSpec("fault", value: "rule", help: "A fault rule.", repeatable: true),
            OptionSpec("live", help: "Analyze live."),
            OptionSpec("verbose", short: "v", help: "More output."),
        ])

    static func parse(_ words: [String], spec: CommandSpec = spec) throws(UsageError) -> ParsedArguments? {
        switch try ArgumentParser.parse(words, spec: spec, commandPath: "faultline proxy") {
        case .run(let parsed): parsed
        case .help: nil
        }
    }

    static func message(_ words: [String], spec: CommandSpec = spec) -> String? {
        do {
            _ = try parse(words, spec: spec)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func valuesFlagsAndPositionals() throws {
        let parsed = try #require(try Self.parse(["in.jsonl", "--listen", "127.0.0.1:8080", "--live", "-v",
                                                  "--fault=drop", "--fault", "close:4009"]))
        #expect(parsed.positionals == ["in.jsonl"])
        #expect(parsed.value("listen") == "127.0.0.1:8080")
        #expect(parsed.flag("live"))
        #expect(parsed.flag("verbose"))
        #expect(parsed.all("fault") == ["drop", "close:4009"])
        #expect(parsed.value("format") == "text", "the declared default")
        #expect(try parsed.required("listen") == "127.0.0.1:8080")
    }

    @Test func doubleDashEndsOptionsAndDashIsPositional() throws {
        let parsed = try #require(try Self.parse(["--", "--live"]))
        #expect(parsed.positionals == ["--live"])
        #expect(!parsed.flag("live"))
        #expect(try Self.parse(["-"])?.positionals == ["-"])
    }

    @Test func helpIsRecognizedAnywhere() throws {
        #expect(try Self.parse(["--listen", "x", "--help"]) == nil)
        #expect(try Self.parse(["-h"]) == nil)
    }

    @Test("usage errors name the flag", arguments: [
        (["--lisen", "x"], "faultline proxy: unknown option '--lisen' (did you mean '--listen'?)"),
        (["--zzzzzzzz"], "faultline proxy: unknown option '--zzzzzzzz'"),
        (["-x"], "faultline proxy: unknown option '-x'"),
        (["--listen"], "faultline proxy: option '--listen' needs a value <host:port>"),
        (["--format", "xml"], "faultline proxy: invalid value 'xml' for '--format': expected one of text, json"),
        (["--listen", "a", "--listen", "b"], "faultline proxy: option '--listen' given more than once"),
        (["--live=yes"], "faultline proxy: flag '--live' takes no value"),
        (["a", "b"], "faultline proxy: unexpected argument 'b'"),
    ])
    func usageErrors(_ words: [String], _ expected: String) {
        #expect(Self.message(words) == expected)
    }

    @Test func missingRequiredArgumentAndOption() throws {
        let spec = CommandSpec(name: "frames", abstract: "x", arguments: [ArgumentSpec("input", help: "In.")],
                               options: [OptionSpec("out", value: "file", help: "Out.")])
        #expect(Self.message([], spec: spec) == "faultline proxy: missing argument <input>")
        let parsed = try #require(try Self.parse(["a"], spec: spec))
        #expect(throws: UsageError.self) { try parsed.required("out") }
        #expect((try? parsed.required("out")) == nil)
        do {
            _ = try parsed.required("out")
        } catch {
            #expect(error.message == "faultline proxy: missing required option '--out'")
        }
    }

    @Test func variadicArguments() throws {
        let spec = CommandSpec(name: "analyze", abstract: "x", arguments: [ArgumentSpec("input", help: "In.", variadic: true)])
        #expect(try Self.parse(["a", "b", "c"], spec: spec)?.positionals == ["a", "b", "c"])
    }

    @Test func convertedValues() throws {
        let parsed = try #require(try Self.parse(["--listen", "12"]))
        #expect(try parsed.parse("listen", as: "a number") { Int($0) } == 12)
        #expect(try parsed.parse("fault", as: "a number") { Int($0) } == nil, "absent option")
        let bad = try #require(try Self.parse(["--listen", "twelve"]))
        #expect(throws: UsageError.self) { try bad.parse("listen", as: "a number") { Int($0) } }
    }
}

@Suite struct HelpFormatterTests {
    @Test func commandHelpHasTheSectionsInOrder() {
        let help = HelpFormatter.help(for: ArgumentParserTests.spec, commandPath: "faultline proxy", root: "faultline")
        let sections = ["OVERVIEW: Relay and record.", "USAGE: faultline proxy [<input>] [--listen <host:port>]", "ARGUMENTS:", "OPTIONS:"]
        var position = help.startIndex
        for section in sections {
            let range = help.range(of: section, range: position..<help.endIndex)
            #expect(range != nil, "\(section) after the previous section")
            if let range { position = range.upperBound }
        }
        #expect(help.contains("[--fault <rule> ...]"))
        #expect(help.contains("  --format <format>         Output format. (values: text, json) (default: text)\n"))
        #expect(help.contains("  -v, --verbose             More output.\n"))
        #expect(help.contains("  -h, --help                Show help information.\n"))
        #expect(!help.contains("--version"), "only the root shows --version")
        #expect(!help.contains("SUBCOMMANDS:"))
    }

    @Test func rootHelpListsSubcommands() {
        var root = CommandSpec(name: "faultline", abstract: "Record and check.")
        root.subcommands = [ArgumentParserTests.spec]
        let help = HelpFormatter.help(for: root, commandPath: "faultline", root: "faultline")
        #expect(help.contains("USAGE: faultline <subcommand>"))
        #expect(help.contains("  --version                 Show the version.\n"))
        #expect(help.contains("SUBCOMMANDS:\n  proxy                     Relay and record.\n"))
        #expect(help.contains("See 'faultline help <subcommand>' for detailed help."))
    }

    @Test func longHelpWrapsUnderItself() {
        let spec = CommandSpec(name: "x", abstract: "x", options: [
            OptionSpec("a-very-long-option-name", value: "value", help: String(repeating: "word ", count: 30)),
        ])
        let help = HelpFormatter.help(for: spec, commandPath: "faultline x", root: "faultline")
        let lines = help.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 80 }, "lines fit 80 columns")
        #expect(lines.contains { $0.hasPrefix(String(repeating: " ", count: 28) + "word") })
    }
}

@Suite struct CommandLineToolTests {
    enum Echo: Command {
        static let spec = CommandSpec(name: "echo", abstract: "Echo.", arguments: [ArgumentSpec("word", help: "W.")])
        static func run(_ arguments: ParsedArguments) throws -> Int32 {
            if arguments.positionals[0] == "fail" { throw UsageError("echo: cannot use 'fail'") }
            return 0
        }
    }

    static var tool: CommandLineTool { CommandLineTool(root: CommandSpec(name: "faultline", abstract: "Test."), version: "faultline 9",
                                      commands: [Echo.self]) }

    @Test func exitStatuses() {
        #expect(Self.tool.main(["echo", "hi"]) == ExitStatus.success)
        #expect(Self.tool.main(["echo", "fail"]) == ExitStatus.usage)
        #expect(Self.tool.main(["echo"]) == ExitStatus.usage)
        #expect(Self.tool.main(["echo", "--bogus"]) == ExitStatus.usage)
        #expect(Self.tool.main(["nope"]) == ExitStatus.usage)
        #expect(Self.tool.main(["--version"]) == ExitStatus.success)
        #expect(Self.tool.main(["help", "echo"]) == ExitStatus.success)
        #expect(Self.tool.main(["help", "nope"]) == ExitStatus.usage)
    }

    @Test func editDistanceSuggestsNearNames() {
        #expect(ArgumentParserTests.message(["--formt", "json"])?.hasSuffix("(did you mean '--format'?)") == true)
    }
}
