import Foundation
import PackagePlugin

/// Embeds every `Specs/*.json` file of the target in its code: writes `EmbeddedSpecs.swift`
/// with each file's bytes as a `[UInt8]` literal, so the built-in specs travel inside the
/// binary and it runs from any directory.
///
/// A build command whose inputs are the JSON files: an edited file is picked up by the
/// next build, and a new file (the folder is listed when SwiftPM plans the build, which a
/// change of the folder's contents triggers) is a new built-in spec with no other change.
/// The source is rewritten only when it changes. The command is a POSIX shell script, not
/// a generator executable target, because `swift build --sanitize=fuzzer` links every
/// executable, host tools included, against libFuzzer's `main`, and a generator then fails
/// to link.
@main
struct EmbedSpecs: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SwiftSourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Specs")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") }.sorted().map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSpecs.swift")
        return [.buildCommand(
            displayName: "Embedding \(inputs.count) built-in specs of \(target.name)",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "embed-specs", folder.path, output.path],
            // This file too: SwiftPM does not re-run a command whose script alone changed.
            inputFiles: inputs + [context.package.directoryURL.appending(path: "Plugins/EmbedSpecs/plugin.swift")],
            outputFiles: [output])]
    }

    /// `sh -c SCRIPT embed-specs FOLDER OUTPUT`. A name that is not a plain file name
    /// (letters, digits, `.`, `_`, `-`) stops the build rather than break the literal.
    static let script = #"""
        set -eu
        export LC_ALL=C
        folder=$1 out=$2
        new=$(
            echo "// Generated at build time by the EmbedSpecs plugin from $(basename "$(dirname "$folder")")/Specs/*.json: do not edit."
            echo ""
            echo "/// The built-in specs, each JSON file's bytes under its name (the file name without"
            echo "/// \`.json\`), in file name order (LC_ALL=C)."
            echo "enum EmbeddedSpecs {"
            echo "    static let files: [(name: String, bytes: [UInt8])] = ["
            for file in "$folder"/*.json; do
                [ -e "$file" ] || continue
                name=$(basename "$file" .json)
                case $name in *[!A-Za-z0-9._-]*) echo "EmbedSpecs: $file: unusable name" >&2; exit 1 ;; esac
                printf '        ("%s", [' "$name"
                od -An -v -tu1 "$file" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//; s/ /, /g'
                printf ']),\n'
            done
            echo "    ]"
            echo "}"
        )
        [ -f "$out" ] && [ "$(cat "$out")" = "$new" ] || printf '%s\n' "$new" > "$out"
        """#
}
