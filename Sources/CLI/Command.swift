/// One `faultline` subcommand: its declaration and what it does.
public protocol Command: SendableMetatype {
    static var spec: CommandSpec { get }
    /// Runs with parsed arguments and returns the exit status. Throws `UsageError` (exit 2)
    /// for arguments that parse but cannot be used (a missing file, a bad address).
    static func run(_ arguments: ParsedArguments) throws -> Int32
}

/// A command with subcommands of its own (`faultline sim server`).
public struct CommandGroup: Sendable {
    public var spec: CommandSpec
    public var commands: [any Command.Type]
    public init(spec: CommandSpec, commands: [any Command.Type]) {
        self.spec = spec
        self.commands = commands
    }
}

/// Dispatches argv to a command, prints help and usage errors in one place.
public struct CommandLineTool {
    public var root: CommandSpec
    public var version: String
    public var commands: [any Command.Type]
    public var groups: [CommandGroup]
    /// Examples and required options by command path ("faultline proxy").
    public var extras: [String: HelpExtras]

    /// Sections the manual page (`help --man`) adds after the commands (ENVIRONMENT, ...).
    public var manSections: [ManPage.Section]

    public init(root: CommandSpec, version: String, commands: [any Command.Type], groups: [CommandGroup] = [],
                extras: [String: HelpExtras] = [:], manSections: [ManPage.Section] = []) {
        self.root = root
        self.version = version
        self.commands = commands
        self.groups = groups
        self.extras = extras
        self.manSections = manSections
        self.root.subcommands = commands.map { $0.spec } + groups.map(\.spec)
    }

    /// Runs the command line (without argv[0]) and returns the exit status.
    public func main(_ words: [String]) -> Int32 {
        let name = root.name
        guard let first = words.first else {
            Console.out(HelpFormatter.help(for: root, commandPath: name, root: name, extras: extras[name]))
            return ExitStatus.success
        }
        switch first {
        case "-h", "--help":
            Console.out(HelpFormatter.help(for: root, commandPath: name, root: name, extras: extras[name]))
            return ExitStatus.success
        case "--version":
            Console.out("\(version)\n")
            return ExitStatus.success
        case "help":
            return help(Array(words.dropFirst()))
        default:
            break
        }
        if let group = groups.first(where: { $0.spec.name == first }) {
            let path = "\(name) \(group.spec.name)"
            guard let sub = words.dropFirst().first, !sub.hasPrefix("-") else {
                if words.count > 1, ["-h", "--help"].contains(words[1]) || words.count == 1 {
                    Console.out(HelpFormatter.help(for: group.spec, commandPath: path, root: name, extras: extras[path]))
                    return words.count == 1 ? ExitStatus.usage : ExitStatus.success
                }
                return usageError("\(path): missing subcommand (expected one of: \(group.commands.map { $0.spec.name }.joined(separator: ", ")))")
            }
            guard let command = group.commands.first(where: { $0.spec.name == sub }) else {
                let names = group.commands.map { $0.spec.name }
                let hint = Suggestion.closest(to: sub, in: names).map { " (did you mean '\($0)'?)" } ?? ""
                return usageError("\(path): unknown subcommand '\(sub)'\(hint) (expected one of: \(names.joined(separator: ", ")))")
            }
            return run(command, Array(words.dropFirst(2)), path: "\(path) \(sub)")
        }
        guard let command = commands.first(where: { $0.spec.name == first }) else {
            let names = commands.map { $0.spec.name } + groups.map(\.spec.name)
            let hint = Suggestion.closest(to: first, in: names).map { " (did you mean '\($0)'?)" } ?? ""
            return usageError("\(name): unknown subcommand '\(first)'\(hint) (expected one of: \(names.joined(separator: ", ")))")
        }
        return run(command, Array(words.dropFirst()), path: "\(name) \(first)")
    }

    private func help(_ path: [String]) -> Int32 {
        let name = root.name
        guard let first = path.first else {
            Console.out(HelpFormatter.help(for: root, commandPath: name, root: name, extras: extras[name]))
            return ExitStatus.success
        }
        if first == "--man", path.count == 1 {
            Console.out(ManPage.render(root: root, version: version, sections: manSections))
            return ExitStatus.success
        }
        if let command = commands.first(where: { $0.spec.name == first }) {
            printHelp(command.spec, path: "\(name) \(first)", topic: path.dropFirst().first)
            return ExitStatus.success
        }
        if let group = groups.first(where: { $0.spec.name == first }) {
            if let sub = path.dropFirst().first, let command = group.commands.first(where: { $0.spec.name == sub }) {
                Console.out(HelpFormatter.help(for: command.spec, commandPath: "\(name) \(first) \(sub)", root: name, extras: extras["\(name) \(first) \(sub)"]))
            } else {
                Console.out(HelpFormatter.help(for: group.spec, commandPath: "\(name) \(first)", root: name, extras: extras["\(name) \(first)"]))
            }
            return ExitStatus.success
        }
        let names = commands.map { $0.spec.name } + groups.map(\.spec.name)
        let hint = Suggestion.closest(to: first, in: names).map { " (did you mean '\($0)'?)" } ?? ""
        return usageError("\(name) help: unknown subcommand '\(first)'\(hint)")
    }

    private func run(_ command: any Command.Type, _ words: [String], path: String) -> Int32 {
        do {
            switch try ArgumentParser.parse(words, spec: command.spec, commandPath: path) {
            case .help(let words):
                printHelp(command.spec, path: path, topic: words.first)
                return ExitStatus.success
            case .run(let arguments):
                return try command.run(arguments)
            }
        } catch let error as UsageError {
            return usageError(error.message)
        } catch {
            return usageError("\(path): \(error)")
        }
    }

    /// The help of `spec`, or of its topic named `topic` when it has one by that name.
    private func printHelp(_ spec: CommandSpec, path: String, topic: String?) {
        if let topic, let shown = spec.topics.first(where: { $0.name == topic }) {
            let topicPath = "\(path) \(topic)"
            Console.out(HelpFormatter.help(for: shown, commandPath: topicPath, root: root.name, extras: extras[topicPath]))
        } else {
            Console.out(HelpFormatter.help(for: spec, commandPath: path, root: root.name, extras: extras[path]))
        }
    }

    private func usageError(_ message: String) -> Int32 {
        let prefix = message.hasPrefix(root.name) ? "" : "\(root.name): "
        // Messages quote input (record types, file names, header values): escaped. Some
        // are several lines on purpose (a fault rule with a caret under the bad part).
        Console.err(TerminalText.escape(prefix + message, keepingNewlines: true) + "\n")
        return ExitStatus.usage
    }
}
