import Lifecycle
import ProtocolTable
import Protocols

/// The specs a run chooses from when each client is judged by the pack detected on it
/// (no `--spec`, no recorded spec): the fallback, which is what detection on the whole
/// input chose (`EntryDetection`), then the built-in spec of every protocol table entry.
/// Spec 0 is the fallback; a client whose own upgrade and first messages never decide is
/// judged by it, so an input of one protocol is judged as it was before detection per
/// client. Loaded once per run, before any record, and shared by every thread.
public final class ClientSpecs: Sendable {
    public let table: ProtocolTable
    /// The specs by number, the fallback first; each with its analyzer options.
    public let options: [AnalyzerOptions]
    /// Entry key (of the table) to spec number.
    private let numberOfEntry: [String: Int]

    /// `base`: the grouping, prefix, app secret and client id prefix every spec shares
    /// (its spec is the fallback). `load` makes a built-in spec by name, with the run's
    /// overrides applied; an entry whose spec does not load is judged by the fallback.
    public init(fallback base: AnalyzerOptions, table: ProtocolTable = .standard,
                load: (String) -> LifecycleSpec?) {
        self.table = table
        var options = [base]
        var numbers: [String: Int] = [:]
        var numberOfSpec = [base.spec.name: 0]
        for registration in table.registrations {
            if let known = numberOfSpec[registration.defaultSpec] {
                numbers[registration.key] = known
                continue
            }
            guard let spec = load(registration.defaultSpec) else { continue }
            var entryOptions = base
            entryOptions.spec = spec
            // This table's entry decodes and judges the spec's clients (not the fallback's).
            entryOptions.entry = registration
            numberOfSpec[registration.defaultSpec] = options.count
            numbers[registration.key] = options.count
            options.append(entryOptions)
        }
        self.options = options
        numberOfEntry = numbers
    }

    /// One spec for every client (`--spec`, a recorded spec): the sharded analysis's engines.
    public init(only options: AnalyzerOptions, table: ProtocolTable = .standard) {
        self.table = table
        self.options = [options]
        numberOfEntry = [:]
    }

    /// The spec a detection's choice makes: its entry's, or the fallback (0) when nothing
    /// was chosen.
    public func number(for choice: ProtocolDetector.Choice?) -> Int {
        choice.flatMap { numberOfEntry[$0.key] } ?? 0
    }

    public func name(_ number: Int) -> String { options[number].spec.name }
}
