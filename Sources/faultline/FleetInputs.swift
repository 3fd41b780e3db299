import CLI
import Capture
import Inputs
import Lifecycle

/// `--merge` for the commands that read one input (`frames`, `export`), and for `ui`: the one input, or
/// every input merged as the replicas of a fleet (`FleetMerge`), the clock corrections
/// said on standard error. `analyze` merges too, with its own grouping (`--client-key`).
enum FleetInputs {
    /// `--merge` and `--max-skew`, as every command that reads a fleet declares them;
    /// `merge` is the command's own wording of what --merge does.
    static func options(merge: String) -> [OptionSpec] {
        [OptionSpec("merge", help: merge),
         OptionSpec("max-skew", value: "duration", help: "With --merge: the most clock skew between replicas the merge corrects.", default: "50ms")]
    }

    /// Refuses --max-skew without --merge.
    static func checkSkew(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        guard arguments.flag("merge") || arguments.all("max-skew").isEmpty else {
            throw UsageError("\(command): --max-skew applies to --merge only")
        }
    }

    /// Refuses several inputs without --merge, and --max-skew without it.
    static func check(_ arguments: ParsedArguments, command: String) throws {
        guard arguments.flag("merge") || arguments.positionals.count == 1 else {
            throw UsageError("\(command): one input at a time (unexpected '\(arguments.positionals[1])'); several replicas' captures are read together with --merge")
        }
        try checkSkew(arguments, command: command)
    }

    /// The merged session of the inputs (after `check`, with --merge given).
    static func merged(_ arguments: ParsedArguments, command: String) throws -> MergedRecordSource {
        let maxSkew = try SpecOptions.duration(arguments, "max-skew") ?? 50_000
        let plan = try FleetMerge.open(arguments.positionals, options: .init(), keyOf: { ClientKeyMode.standard.key(open: $0, request: $1) },
                                       maxSkew: maxSkew, command: command)
        for note in plan.notes { Console.err(TerminalText.escape("faultline: \(note)") + "\n") }
        return plan.source
    }

    /// The one input, or the merged inputs with --merge.
    static func open(_ arguments: ParsedArguments, command: String) throws -> any RecordSource {
        try check(arguments, command: command)
        return arguments.flag("merge") ? try merged(arguments, command: command) : try InputSources.open(arguments.positionals[0])
    }
}
