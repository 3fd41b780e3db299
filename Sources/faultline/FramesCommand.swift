import CLI
import Capture
import JSON
import WebSocket

/// `faultline frames INPUT [--format text|json]`: one decoded frame a line, streaming.
enum FramesCommand: Command {
    static let spec = CommandSpec(
        name: "frames",
        abstract: "Print the WebSocket frames of a capture, one a line.",
        discussion: """
            INPUT is a faultline capture (or '-' for standard input); its kind is detected
            from its first bytes. Records are read and printed as they come, in constant
            memory. Warnings (a torn last line, a pcap stream error: where frames may be
            missing) go to standard error.
            """,
        arguments: [ArgumentSpec("input", help: "The capture to read, or '-' for standard input.")],
        options: [
            OptionSpec("format", value: "format",
                       help: "text: aligned columns for people; json: one object a line with conn, t, from, opcode, fin, rsv1, len, close_code, close_reason, event, action.",
                       default: "text", choices: ["text", "json"]),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let path = arguments.positionals[0]
        let json = arguments.value("format") == "json"
        var source = try InputSources.open(path)
        var output = BufferedOutput()
        defer { output.flush() }
        var notes = StreamNotes()
        while let record = try nextRecord(&source, output: &output) {
            switch record {
            case .frame(let frame):
                if json { FrameLine.json(frame, into: &output) } else { FrameLine.text(frame, into: &output) }
            case .note(let note):
                // A stream error (a frame length of 2^63, a hole, a conflict) is where
                // frames went missing: said on standard error as it happens.
                if let line = notes.take(note) {
                    output.flush()
                    Console.err("faultline: \(line)\n")
                }
            default:
                continue
            }
        }
        output.flush()
        if let line = notes.omittedLine { Console.err("faultline: \(line)\n") }
        for warning in source.warnings { Console.err(TerminalText.escape("faultline: warning: \(warning)") + "\n") }
        return ExitStatus.success
    }

    /// The next record; on an error, what was printed so far goes out first.
    private static func nextRecord(_ source: inout any RecordSource, output: inout BufferedOutput) throws -> CaptureRecord? {
        do {
            return try source.next()
        } catch {
            output.flush()
            throw error
        }
    }
}
