import Foundation
import Testing
import TestSupport

/// Every command's help agrees with itself: an option marked "(required)" is shown without
/// brackets in USAGE (and one in brackets is not marked), no default is printed twice, and
/// no help text claims "required" on its own (the mark comes from the option's declaration).
@Suite struct HelpConsistencyTests {
    /// The OPTIONS rows of a help text: (label, help) with wrapped lines joined.
    static func optionRows(_ help: String) -> [(label: String, text: String)] {
        guard let start = help.range(of: "\nOPTIONS:\n") else { return [] }
        let section = String(help[start.upperBound...]).components(separatedBy: "\n\n")[0]
        var rows: [(label: String, text: String)] = []
        for line in section.split(separator: "\n").map(String.init) {
            if line.hasPrefix("   ") {
                if !rows.isEmpty { rows[rows.count - 1].text += " " + line.trimmingCharacters(in: .whitespaces) }
            } else {
                let trimmed = String(line.dropFirst(2))
                let label = trimmed.components(separatedBy: "  ")[0]
                rows.append((label, String(trimmed.dropFirst(label.count)).trimmingCharacters(in: .whitespaces)))
            }
        }
        return rows
    }

    @Test func requiredAndDefaultsAgreeWithUsage() throws {
        for path in HelpAndSpecsTests.commandPaths {
            let words = ["help"] + path.split(separator: " ").map(String.init)
            let help = try runFaultline(words).stdout
            let usage = try #require(help.split(separator: "\n").first { $0.hasPrefix("USAGE: ") }.map(String.init))
            for row in Self.optionRows(help) {
                guard let name = row.label.split(separator: " ").first(where: { $0.hasPrefix("--") }) else { continue }
                let required = row.text.hasSuffix("(required)")
                #expect(row.text.components(separatedBy: "(default:").count <= 2, "\(path) \(name): \(row.text)")
                #expect(!row.text.replacingOccurrences(of: "(required)", with: "").lowercased().contains("required"),
                        "\(path) \(name) says 'required' in its text: \(row.text)")
                // Commands with a hand-written usage line (alternatives) are not generated.
                guard usage.contains(" [--") else { continue }
                if required {
                    #expect(usage.contains(" \(name) ") || usage.hasSuffix(" \(name)"), "\(path): \(name) is required but not in USAGE unbracketed: \(usage)")
                    #expect(!usage.contains("[\(name) "), "\(path): \(name) is required but bracketed: \(usage)")
                }
            }
        }
    }

    @Test func theMarkedOptionsAreTheOnesTheParserRequires() throws {
        for (command, option) in [(["cert"], "--out"), (["synth"], "--out"), (["export", "x.jsonl"], "--pcap"),
                                  (["sim", "server"], "--listen"), (["sim", "client"], "--url"), (["proxy"], "--listen")] {
            let run = try runFaultline(command)
            #expect(run.status == 2 && run.stderr.contains("missing required option '\(option)'"), "\(command): \(run.stderr)")
        }
        let ctl = try runFaultline(["help", "ctl"]).stdout
        #expect(ctl.contains("[--token-file <file>]") && ctl.contains("[--timeout <seconds>]"), "\(ctl)")
    }
}
