import CLI
import Capture
import Inputs
import Pcap

/// `faultline export CAPTURE --pcap FILE`: a capture as a pcap Wireshark opens.
enum ExportCommand: Command {
    static let spec = CommandSpec(
        name: "export",
        abstract: "Write a capture as a pcapng of synthetic TCP that Wireshark opens.",
        discussion: """
            Faithful to the wire: a proxy capture's connection becomes two TCP conversations,
            the client's leg (client <-> proxy) and the upstream leg (proxy <-> server), with
            their recorded addresses, each carrying only what went over it. A frame a fault
            dropped appears only on the leg it arrived on, an injected one only on the leg it
            was sent on, a delayed one on each leg at its own time; every packet a fault
            touched carries a comment naming the fault and what it did (dropped, delayed,
            injected, rewritten), shown by Wireshark as frame.comment. Each conversation has
            a three-way handshake, the HTTP upgrade, every frame re-encoded (client frames
            masked with a key derived from the connection and frame number, so exports
            repeat byte for byte), and FIN or RST at its end records. Compressed messages are
            deflated again with the negotiated parameters: the text Wireshark shows is the
            recorded one, the compressed length may differ. INPUT may be any input 'frames'
            reads; a pcap gives one conversation per connection, as captured. --merge exports the
            captures of several replicas of a fleet as one session (as 'analyze --merge' reads
            them): one pcapng in wall-clock order, connections numbered anew.
            """,
        arguments: [ArgumentSpec("input", help: "The capture to export (plain, zstd or gzip), or '-' for standard input (several with --merge).", variadic: true)],
        options: [
            OptionSpec("pcap", value: "file", help: "The pcapng file to write (replaced if it exists).", required: true),
        ] + FleetInputs.options(merge: "Export the inputs as the replicas of one fleet, one session in wall-clock order (default: one input)."))

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        guard let output = arguments.value("pcap") else {
            throw UsageError("faultline export: missing --pcap FILE (where to write the pcap)")
        }
        var source: any RecordSource = try FleetInputs.open(arguments, command: "faultline export")
        if let progress = InputProgress.line("export", reading: arguments.positionals) {
            source = ProgressingSource(source, progress)
        }
        var exporter = try PcapExporter(path: output)
        try exporter.export(&source)
        (source as? ProgressingSource)?.progress.finish()
        for warning in exporter.warnings { Console.err(TerminalText.escape("faultline: warning: \(warning)") + "\n") }
        Console.err("faultline export: wrote \(output): \(exporter.packetCount) packets, \(exporter.frameCount) frames\n")
        return ExitStatus.success
    }
}
