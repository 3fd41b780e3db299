import Foundation

/// A shell session written in the README or a `docs/` page, marked to be run by the docs
/// test (`DocSessionTests`): the commands after `$ ` and the output shown under each.
///
/// The marker is an HTML comment right before the fenced block (GitHub does not render it):
///
///     <!-- session
///     ports: 7001 7002
///     background: faultline sim server --listen 127.0.0.1:7001
///     background: faultline sim client --url ws://127.0.0.1:7001/app/sim-key --duration 60s
///     wait: client 1: connecting -> connected
///     setup: faultline cert --out certs
///     env: FAULTLINE_CONTROL=127.0.0.1:7002
///     -->
///
/// - `ports:` the fixed ports the session names; each is replaced, in every command, setup,
///   background line and in the expected output, by a port that was free a moment ago, so
///   sessions never collide with each other or with other tests.
/// - `background:` a command started before the session (in its folder, with `faultline`
///   on the PATH) and killed after it; the session starts once its output has named every
///   port of its command line (the proxy's "listening on ...", "control API on ...").
/// - `wait:` waits (up to 30 s) until the last background command printed a line holding
///   this text (a client is connected).
/// - `setup:` a command run to completion before the session; it must exit 0.
///
/// - `env: NAME=VALUE` is exported for the commands (a default the page's commands rely
///   on, such as `ctl`'s address, pointed at the session's stand-in port).
///
/// These run in the order written. Then the block's leading `$ COMMAND &` lines are started
/// the same way as `background:` lines, each waited for until it printed the lines shown
/// under it; the other `$ ` lines run in one shell, one after the other.
///
/// In the expected output, `[..]` stands for any text within a line (a time, an id, a
/// client's port), and a line of just `...` for any number of lines, as in trycmd.
struct DocSession: Sendable, CustomStringConvertible {
    /// One `$ command` and the output lines the page shows under it.
    struct Step: Sendable {
        var command: String
        var expected: [String]
    }

    var file: String
    /// The line of the opening fence, 1-based.
    var line: Int
    var ports: [Int] = []
    /// What runs before the commands, in the marker's order.
    enum Preparation: Sendable {
        case background(String), wait(String), setup(String)
    }
    var preparations: [Preparation] = []
    /// `env:` lines, NAME=VALUE.
    var environment: [String] = []
    var steps: [Step] = []

    var description: String { "\(file):\(line)" }

    /// Every marked session of a Markdown text. A marker whose block has no `$ ` line, or a
    /// marker line it does not know, is an error naming its line: a typo must not silently
    /// turn a session off.
    static func parse(_ text: String, file: String) throws -> [DocSession] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var sessions: [DocSession] = []
        var index = 0
        var inFence = false
        while index < lines.count {
            // A marker shown inside a fenced block (the README's example of one) is text.
            if lines[index].hasPrefix("```") { inFence.toggle() }
            guard !inFence, lines[index].trimmingCharacters(in: .whitespaces) == "<!-- session" else { index += 1; continue }
            let markerLine = index + 1
            var session = DocSession(file: file, line: 0)
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "-->" {
                let entry = lines[index].trimmingCharacters(in: .whitespaces)
                if let value = entry.dropPrefix("ports:") {
                    for word in value.split(separator: " ") {
                        guard let port = Int(word), (1...65535).contains(port) else {
                            throw DocSessionError("\(file):\(index + 1): bad port '\(word)'")
                        }
                        session.ports.append(port)
                    }
                } else if let value = entry.dropPrefix("background:") {
                    session.preparations.append(.background(value.trimmingCharacters(in: .whitespaces)))
                } else if let value = entry.dropPrefix("wait:") {
                    guard session.preparations.contains(where: { if case .background = $0 { true } else { false } }) else {
                        throw DocSessionError("\(file):\(index + 1): 'wait:' needs a background: line before it")
                    }
                    session.preparations.append(.wait(value.trimmingCharacters(in: .whitespaces)))
                } else if let value = entry.dropPrefix("env:") {
                    let assignment = value.trimmingCharacters(in: .whitespaces)
                    guard let equals = assignment.firstIndex(of: "="),
                          assignment[..<equals].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
                          equals != assignment.startIndex else {
                        throw DocSessionError("\(file):\(index + 1): 'env:' takes NAME=VALUE, not '\(assignment)'")
                    }
                    session.environment.append(assignment)
                } else if let value = entry.dropPrefix("setup:") {
                    session.preparations.append(.setup(value.trimmingCharacters(in: .whitespaces)))
                } else if !entry.isEmpty {
                    throw DocSessionError("\(file):\(index + 1): unknown session marker line '\(entry)' (expected ports:, background:, wait:, setup: or env:)")
                }
                index += 1
            }
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces).isEmpty { index += 1 }
            guard index < lines.count, lines[index].hasPrefix("```") else {
                throw DocSessionError("\(file):\(markerLine): a session marker must be followed by a fenced block")
            }
            session.line = index + 1
            index += 1
            var body: [String] = []
            while index < lines.count, !lines[index].hasPrefix("```") { body.append(lines[index]); index += 1 }
            index += 1
            guard let steps = steps(of: body) else {
                throw DocSessionError("\(file):\(session.line): a session block starts with a '$ ' command")
            }
            // Leading `$ COMMAND &` lines start servers: run as background commands, their
            // lines shown under them waited for.
            var rest = steps[...]
            while let first = rest.first, first.command.hasSuffix(" &"), rest.count > 1 {
                session.preparations.append(.background(String(first.command.dropLast(2))))
                session.preparations += first.expected.map { .wait($0) }
                rest = rest.dropFirst()
            }
            session.steps = Array(rest)
            sessions.append(session)
        }
        return sessions
    }

    /// A command is a `$ ` line, continued by lines ending in a backslash; everything up to
    /// the next `$ ` is its output. Nil when the block does not start with a command.
    private static func steps(of body: [String]) -> [Step]? {
        guard body.first?.hasPrefix("$ ") == true else { return nil }
        var steps: [Step] = []
        var index = 0
        while index < body.count {
            guard let first = body[index].dropPrefix("$ ") else {
                steps[steps.count - 1].expected.append(body[index])
                index += 1
                continue
            }
            var command = first
            while command.hasSuffix("\\"), index + 1 < body.count {
                index += 1
                command += "\n" + body[index]
            }
            steps.append(Step(command: command, expected: []))
            index += 1
        }
        return steps
    }

    /// `text` with each of the session's ports replaced by its stand-in, as a whole number
    /// (18081 is not touched by a port 1808).
    static func substitute(_ text: String, _ ports: [Int: Int]) -> String {
        guard !ports.isEmpty else { return text }
        var result = ""
        var digits = ""
        func flush() {
            if let number = Int(digits), let replacement = ports[number], digits.first != "0" {
                result += String(replacement)
            } else {
                result += digits
            }
            digits = ""
        }
        for character in text {
            if character.isASCII, character.isNumber { digits.append(character) } else { flush(); result.append(character) }
        }
        flush()
        return result
    }
}

struct DocSessionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether output lines match a page's expected lines, with `[..]` (any text within a
/// line) and `...` lines (any number of lines).
enum DocOutputMatch {
    static func matches(_ actual: [String], _ expected: [String]) -> Bool {
        matches(actual[...], expected[...])
    }

    private static func matches(_ actual: ArraySlice<String>, _ expected: ArraySlice<String>) -> Bool {
        guard let first = expected.first else { return actual.isEmpty }
        if first == "..." {
            let rest = expected.dropFirst()
            return actual.indices.contains { matches(actual[$0...], rest) } || matches(actual[actual.endIndex...], rest)
        }
        guard let line = actual.first, lineMatches(line, first) else { return false }
        return matches(actual.dropFirst(), expected.dropFirst())
    }

    /// One line against a pattern whose `[..]` match any text (the pieces between them in
    /// order, the first at the start and the last at the end).
    static func lineMatches(_ line: String, _ pattern: String) -> Bool {
        let pieces = pattern.components(separatedBy: "[..]")
        guard pieces.count > 1 else { return line == pattern }
        guard line.hasPrefix(pieces[0]) else { return false }
        var rest = line.dropFirst(pieces[0].count)
        for piece in pieces.dropFirst().dropLast() {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        let last = pieces[pieces.count - 1]
        return rest.count >= last.count && rest.hasSuffix(last)
    }
}

private extension String {
    func dropPrefix(_ prefix: String) -> String? { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil }
}
