import CLI
import Capture
import Lifecycle
import Vocabulary

/// How a `SpecChoice` and a capture's recorded spec combine into the spec that judges it.
public enum SpecResolution {
    /// Loads a spec by name or file; a failure names `origin`, or `--spec` when the name was
    /// given on the command line (`given`).
    public static func load(_ name: String, given: Bool, command: String, origin: String? = nil) throws(UsageError) -> LifecycleSpec {
        do {
            return try SpecLoader.load(name)
        } catch {
            throw UsageError("\(command): \(origin ?? (given ? "--spec: " : ""))\(error)")
        }
    }

    /// The spec an input is judged by when the choice names one or the input recorded one
    /// (without either, detection decides: `AnalysisRun`). The choice wins: a named spec
    /// replaces the recorded spec and its values, and each override replaces that one value.
    /// `note` says, for standard error, when the recorded spec was used.
    static func resolve(_ choice: SpecChoice, recorded: RecordedSpec?, input: String, command: String)
        throws(UsageError) -> (spec: LifecycleSpec, note: String?)
    {
        let given = choice.overrides
        if let loaded = choice.loaded { return (given.apply(to: loaded), nil) }
        guard let recorded, choice.named == nil else {
            return (given.apply(to: try load(choice.named ?? SpecChoice.defaultSpec, given: choice.named != nil, command: command)), nil)
        }
        let unknown = recorded.overrides.map(\.key).filter { !SpecOverrides.keys.contains($0) }
        let origin = "\(input): the spec it was recorded under, '\(recorded.name)': "
        let base = try load(recorded.name, given: false, command: command, origin: origin)
        let merged = SpecOverrides(recorded: recorded.overrides).overridden(by: given)
        var note = "\(command): \(input): judged by the spec it was recorded under: \(describe(recorded.name, merged))"
        let replaced = given.recorded.map { "--\(flag($0.key))" }
        if !replaced.isEmpty { note += " (\(replaced.joined(separator: ", ")) from the command line)" }
        if !unknown.isEmpty { note += "; recorded values this version does not know, not applied: \(unknown.joined(separator: ", "))" }
        note += "; --spec NAME judges it by another"
        return (merged.apply(to: base), note)
    }

    /// The option an override key is given by: "pong_timeout" is `--pong-timeout`.
    public static func flag(_ key: String) -> String { key.replacingOccurrences(of: "_", with: "-") }

    /// "bird --pong-timeout 1s --resubscribe-window 3s": a spec and its values as flags.
    static func describe(_ name: String, _ overrides: SpecOverrides) -> String {
        ([name] + overrides.recorded.map { "--\(flag($0.key)) \(seconds($0.micros))" }).joined(separator: " ")
    }

    /// "1s", "0.25s": microseconds as the shortest seconds text.
    static func seconds(_ micros: Int64) -> String {
        micros % 1_000_000 == 0 ? "\(micros / 1_000_000)s" : "\(Double(micros) / 1_000_000)s"
    }
}
