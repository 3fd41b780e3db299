/// A command line that could not be used. Printed as one line; the program exits with 2.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The parsed words of one command line, checked against its `CommandSpec`.
public struct ParsedArguments: Sendable {
    public let command: String
    public var positionals: [String]
    public var values: [String: [String]]
    public var flags: Set<String>

    /// The single value of an option, or its declared default.
    public func value(_ name: String) -> String? { values[name]?.last ?? defaults[name] }
    /// Every value of a repeatable option, in order.
    public func all(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    var defaults: [String: String] = [:]

    /// An option's value, or a usage error naming the missing option.
    public func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError("\(command): missing required option '--\(name)'") }
        return value
    }

    /// An option's value converted by `convert`; a nil result is a usage error naming the flag.
    public func parse<T>(_ name: String, as what: String, _ convert: (String) -> T?) throws(UsageError) -> T? {
        guard let raw = value(name) else { return nil }
        guard let value = convert(raw) else {
            throw UsageError("\(command): invalid value '\(raw)' for '--\(name)': expected \(what)")
        }
        return value
    }
}

/// Outcome of parsing: either arguments to run with, or a request for help, with the
/// positional words read before it (`ctl intercept --help` asks for `intercept`'s help).
public enum ParseOutcome: Sendable {
    case run(ParsedArguments)
    case help(after: [String])
}

public enum ArgumentParser {
    /// Parses `words` (without the command names) against `spec`.
    /// `--name value`, `--name=value`, `-x` for short flags, `--` ends the options.
    public static func parse(_ words: [String], spec: CommandSpec, commandPath: String) throws(UsageError) -> ParseOutcome {
        var parsed = ParsedArguments(command: commandPath, positionals: [], values: [:], flags: [])
        for option in spec.options { if let value = option.defaultValue { parsed.defaults[option.name] = value } }
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                parsed.positionals.append(word)
                continue
            }
            if word == "--" { optionsEnded = true; continue }
            if word == "-h" || word == "--help" { return .help(after: parsed.positionals) }
            var name: String
            var inlineValue: String?
            let option: OptionSpec
            if word.hasPrefix("--") {
                name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let found = spec.options.first(where: { $0.name == name }) else {
                    throw UsageError("\(commandPath): unknown option '--\(name)'" + suggestion(for: name, in: spec))
                }
                option = found
            } else {
                let letters = Array(word.dropFirst())
                guard letters.count == 1, let found = spec.options.first(where: { $0.short == letters[0] }) else {
                    throw UsageError("\(commandPath): unknown option '\(word)'")
                }
                option = found
                name = found.name
            }
            if option.isFlag {
                if inlineValue != nil { throw UsageError("\(commandPath): flag '--\(name)' takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < words.count else {
                    throw UsageError("\(commandPath): option '--\(name)' needs a value <\(option.valueName ?? "value")>")
                }
                value = words[index]
                index += 1
            }
            if let choices = option.choices, !choices.contains(value) {
                throw UsageError("\(commandPath): invalid value '\(value)' for '--\(name)': expected one of \(choices.joined(separator: ", "))")
            }
            if !option.repeatable, parsed.values[name] != nil {
                throw UsageError("\(commandPath): option '--\(name)' given more than once")
            }
            parsed.values[name, default: []].append(value)
        }
        try checkPositionals(parsed.positionals, spec: spec, commandPath: commandPath)
        if let missing = spec.options.first(where: { $0.required && parsed.values[$0.name] == nil && $0.defaultValue == nil }) {
            throw UsageError("\(commandPath): missing required option '--\(missing.name)'")
        }
        return .run(parsed)
    }

    private static func checkPositionals(_ positionals: [String], spec: CommandSpec, commandPath: String) throws(UsageError) {
        let required = spec.arguments.filter { !$0.optional }.count
        let variadic = spec.arguments.contains { $0.variadic }
        if positionals.count < required {
            let missing = spec.arguments.filter { !$0.optional }[positionals.count]
            throw UsageError("\(commandPath): missing argument <\(missing.name)>")
        }
        if !variadic, positionals.count > spec.arguments.count {
            throw UsageError("\(commandPath): unexpected argument '\(positionals[spec.arguments.count])'")
        }
    }

    private static func suggestion(for name: String, in spec: CommandSpec) -> String {
        let best = spec.options.map { ($0.name, editDistance($0.name, name)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, name.count / 3) else { return "" }
        return " (did you mean '--\(best.0)'?)"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
