import CLI
import Foundation
import Glibc
import Capture
import Inputs
import JSON
import Pcap
import Reports
import WebSocket

/// `faultline frames INPUT`: one decoded frame a line, streaming; filters answer "what
/// happened on connection 3" (`--conn`, `--client`, `--from`, `--event`), `--all` adds the
/// opens, upgrades, ends, notes and fault actions, `--payload` shows what was sent, and
/// `--follow` reads a capture the proxy is still writing.
enum FramesCommand: Command {
    static let spec = CommandSpec(
        name: "frames",
        abstract: "Print the WebSocket frames of a capture, one a line.",
        discussion: """
            INPUT is a faultline capture or a pcap/pcapng file (or '-' for standard input); its
            kind is detected from its first bytes; a zstd- or gzip-compressed capture (.jsonl.zst,
            .jsonl.gz) is read as it is, --follow included. Records are read and printed as they come,
            in constant memory. Warnings (a torn last line, a pcap stream error: where frames may be
            missing) go to standard error.

            Filters combine (all must match): --conn, --client (the client ids of 'faultline
            analyze'), --from, --event (a Bird/Pusher event name, with or without its prefix:
            ping matches bird:ping). --all also prints the records that are not frames (TCP
            opens, upgrades, TCP ends, notes, faults the proxy fired), so a drop shows up
            between the frames; in JSON they carry "record" (open, upgrade, end, note, fault),
            frames do not.

            EXAMPLES:
              faultline frames session.jsonl --conn 3 --all
              faultline frames session.jsonl --client client-2 --from server --payload
              faultline frames session.jsonl --event subscribe --format json
              faultline frames traffic.pcap --filter 'tcp port 8080'
              faultline frames session.jsonl --follow      (while the proxy records)
              faultline frames --merge r1.jsonl.zst r2.jsonl.zst r3.jsonl.zst --client client-1

            --merge reads the captures of several replicas of a fleet as one session, as
            'analyze --merge' does: records in wall-clock order, connections numbered anew,
            each line starting with its connection's replica (JSON: a "replica" member).
            """,
        arguments: [ArgumentSpec("input", help: "The capture or pcap to read, or '-' for standard input (several with --merge).", variadic: true)],
        options: [
            OptionSpec("format", value: "format",
                       help: "text: aligned columns for people; json: one object a line with conn, t, from, opcode, fin, rsv1, len, close_code, close_reason, event, action.",
                       default: "text", choices: ["text", "json"]),
            OptionSpec("conn", value: "n", help: "Only these connections: 3, 1,4 or 2-5 (repeatable; default: all).", repeatable: true),
            OptionSpec("client", value: "id", help: "Only the connections of this client, as 'faultline analyze' groups them: client-2 (default: all)."),
            OptionSpec("from", value: "side", help: "Only frames sent by this side (default: both).", choices: ["client", "server"]),
            OptionSpec("event", value: "name", help: "Only frames carrying this Bird/Pusher event: bird:subscribe or subscribe (default: all)."),
            OptionSpec("filter", value: "bpf", help: "BPF filter for pcap input, as tcpdump takes it (default: none; refused for captures)."),
            OptionSpec("all", help: "Also print opens, upgrades, TCP ends, notes and faults fired."),
            OptionSpec("payload", help: "Also print each frame's payload: text as a quoted string, binary as base64."),
            OptionSpec("max-payload-chars", value: "n", help: "Cut printed payloads to N characters.", default: "200"),
            OptionSpec("follow", help: "Keep reading a capture that is still being written; stop with Ctrl-C."),
        ] + FleetInputs.options(merge: "Read the inputs as the replicas of one fleet, one session in wall-clock order (default: one input)."))

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = "faultline frames"
        let path = arguments.positionals[0]
        let merge = arguments.flag("merge")
        try FleetInputs.check(arguments, command: command)
        let json = arguments.value("format") == "json"
        let all = arguments.flag("all")
        let showPayload = arguments.flag("payload")
        let maxChars = try arguments.parse("max-payload-chars", as: "a whole number from 1 to 1000000") {
            Int($0).flatMap { (1...1_000_000).contains($0) ? $0 : nil }
        } ?? 200
        var selection = try FrameSelection(arguments)
        let follow = arguments.flag("follow")
        var source: any RecordSource
        if merge {
            guard !follow, arguments.value("filter") == nil else {
                throw UsageError("\(command): --merge reads finished captures: not with --follow or --filter")
            }
            source = try FleetInputs.merged(arguments, command: command)
        } else if follow {
            guard path != "-" else { throw UsageError("\(command): --follow needs a capture file, not standard input") }
            guard arguments.value("filter") == nil else { throw UsageError("\(command): --filter applies to pcap input; --follow reads captures") }
            source = try FollowingCapture(path: path)
            // Following ends with Ctrl-C or a kill: make sure neither is blocked by a mask
            // inherited from the parent (test runners and some shells block them).
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            sigprocmask(SIG_UNBLOCK, &signals, nil)
        } else {
            source = try InputSources.open(path, options: .init(filter: arguments.value("filter")))
            if arguments.value("filter") != nil, source.header.source != "pcap" {
                throw UsageError("\(command): --filter applies to pcap input only; '\(path)' is a faultline capture (use --conn, --client, --from, --event)")
            }
        }
        let fleet = source as? MergedRecordSource
        var printer = FramePrinter(json: json, all: all, showPayload: showPayload, maxChars: maxChars, follow: follow,
                                   fleet: fleet, width: fleet?.replicas.map(\.count).max() ?? 0)
        if var pcap = source as? PcapRecordSource {
            // Through the concrete type: the loop is specialized for it, so each record comes
            // straight from the decoder instead of through the `any RecordSource` witness.
            defer { source = pcap }
            try printer.printAll(from: &pcap, selection: &selection)
        } else {
            try printer.printAll(from: &source, selection: &selection)
        }
        if let line = printer.notes.omittedLine { Console.err("faultline: \(line)\n") }
        for warning in source.warnings { Console.err(TerminalText.escape("faultline: warning: \(warning)") + "\n") }
        // Printing nothing for an input without a connection would look like a clean one.
        if let message = printer.inventory.noConnectionMessage(path, source: source) { throw UsageError("\(command): \(message)") }
        return ExitStatus.success
    }

    /// A frame's JSON line with `payload`, `payload_encoding` and `payload_truncated` added
    /// before the closing brace.
    static func payloadJSON(_ frame: FrameRecord, maxChars: Int, into output: inout BufferedOutput) {
        FrameLine.json(frame, into: &output)
        // The line ends with "}\n": put the fields before the brace.
        guard output.unwrite(2) else { return }
        let (text, encoding, truncated) = RecordLine.payload(frame, maxChars: maxChars)
        var extra: [UInt8] = Array(",\"payload\":".utf8)
        JSONWriter.writeString(text, into: &extra)
        extra += Array(",\"payload_encoding\":\"\(encoding)\",\"payload_truncated\":\(truncated)}\n".utf8)
        output.write(extra)
    }

    /// `"replica":NAME` added before the closing brace of the JSON line just written.
    static func addReplica(_ replica: String, into output: inout BufferedOutput) {
        guard output.unwrite(2) else { return }
        var extra: [UInt8] = Array(",\"replica\":".utf8)
        JSONWriter.writeString(replica, into: &extra)
        extra += Array("}\n".utf8)
        output.write(extra)
    }

}
