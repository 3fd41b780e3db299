@testable import CLI
import Testing

/// "Required" and defaults in help come from the option's declaration, the same one the
/// parser enforces, so help and parser cannot disagree.
@Suite struct HelpFromSpecTests {
    static let spec = CommandSpec(name: "cert", abstract: "Make certificates.", options: [
        OptionSpec("out", value: "dir", help: "The directory to write to.", required: true),
        OptionSpec("days", value: "n", help: "Validity.", default: "30"),
        OptionSpec("host", value: "name", help: "A host name.", repeatable: true),
    ])

    @Test func aRequiredOptionIsUnbracketedAndMarkedAndItsDefaultShownOnce() {
        let help = HelpFormatter.help(for: Self.spec, commandPath: "faultline cert", root: "faultline")
        #expect(help.contains("USAGE: faultline cert --out <dir> [--days <n>] [--host <name> ...]\n"), "\(help)")
        #expect(help.contains("The directory to write to. (required)"), "\(help)")
        #expect(help.contains("Validity. (default: 30)\n"), "\(help)")
        #expect(help.components(separatedBy: "(default:").count == 2)
    }

    @Test func theParserRefusesAMissingRequiredOptionButNotHelp() throws {
        let error = #expect(throws: UsageError.self) { try ArgumentParser.parse([], spec: Self.spec, commandPath: "faultline cert") }
        #expect(error?.message == "faultline cert: missing required option '--out'")
        guard case .help = try ArgumentParser.parse(["--help"], spec: Self.spec, commandPath: "faultline cert") else {
            Issue.record("--help without --out must show help")
            return
        }
        guard case .run(let parsed) = try ArgumentParser.parse(["--out", "certs"], spec: Self.spec, commandPath: "faultline cert") else {
            Issue.record("--out given: runs")
            return
        }
        #expect(parsed.value("out") == "certs" && parsed.value("days") == "30")
    }
}
