import CLI
import Lifecycle

/// `faultline specs`: the built-in lifecycle specs and the rules they check, so a user can
/// learn what the analyzer knows without the source: list the specs, print one as JSON (a
/// starting point for `--spec FILE`), list every rule with its severity and meaning.
enum SpecsCommand: Command {
    static let spec = CommandSpec(
        name: "specs",
        abstract: "List the built-in lifecycle specs and their rules; print one as JSON.",
        discussion: """
            Without arguments, lists the built-in specs. 'show NAME' prints a spec's JSON (save
            it, change it, pass it to 'analyze --spec FILE'; the format is in docs/spec-format.md).
            'rules [NAME]' lists every rule (of one spec, or all) with its severity and what
            breaks it; 'faultline analyze --explain RULE' explains one rule with an example.
            The rule table with examples is docs/rules.md.

            EXAMPLES:
              faultline specs
              faultline specs show bird > my-spec.json
              faultline specs rules agora-rtm
              faultline analyze --explain channels.resubscribe
            """,
        usage: "faultline specs [list | show <name> | rules [<name>]]",
        arguments: [
            ArgumentSpec("action", help: "list (default), show or rules.", optional: true),
            ArgumentSpec("name", help: "A built-in spec: \(SpecLoader.builtInNames.joined(separator: ", ")).", optional: true),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = "faultline specs"
        let action = arguments.positionals.first ?? "list"
        let name = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
        switch action {
        case "list":
            for specName in SpecLoader.builtInNames {
                let spec = try load(specName, command: command)
                Console.out("\(specName)\(String(repeating: " ", count: max(1, 18 - specName.count)))\(spec.description)\n")
            }
            Console.out("\nfaultline specs show NAME prints one as JSON; faultline specs rules lists the rules.\n")
        case "show":
            guard let name else { throw UsageError("\(command) show: missing spec name (one of: \(SpecLoader.builtInNames.joined(separator: ", ")))") }
            guard let text = SpecLoader.builtInSource(name) else {
                throw UsageError("\(command) show: unknown spec '\(name)'\(suggest(name, SpecLoader.builtInNames)) (one of: \(SpecLoader.builtInNames.joined(separator: ", ")))")
            }
            Console.out(text.hasSuffix("\n") ? text : text + "\n")
        case "rules":
            let ids: [String]
            if let name {
                ids = try load(name, command: command).rules
            } else {
                ids = RuleRegistry.ids
            }
            let width = ids.map(\.count).max() ?? 0
            for id in ids {
                guard let type = RuleRegistry.type(for: id) else { continue }
                let severity = type.severity.rawValue + (type.party == .server ? " (server)" : "")
                let meaning = RuleGuide.entry(id)?.meaning ?? type.summary
                Console.out("\(id)\(String(repeating: " ", count: width - id.count))  \(severity)\(String(repeating: " ", count: max(1, 17 - severity.count)))\(meaning)\n")
            }
        default:
            throw UsageError("\(command): unknown action '\(action)'\(suggest(action, ["list", "show", "rules"])) (expected list, show NAME or rules [NAME])")
        }
        return ExitStatus.success
    }

    static func load(_ name: String, command: String) throws -> LifecycleSpec {
        guard SpecLoader.builtInNames.contains(name) else {
            throw UsageError("\(command): unknown spec '\(name)'\(suggest(name, SpecLoader.builtInNames)) (one of: \(SpecLoader.builtInNames.joined(separator: ", ")))")
        }
        do { return try SpecLoader.load(name) } catch { throw UsageError("\(command): \(error)") }
    }

    /// " (did you mean 'bird'?)" for a near miss, else "".
    static func suggest(_ word: String, _ candidates: [String]) -> String {
        Suggestion.closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }
}
