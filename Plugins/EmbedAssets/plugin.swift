import Foundation
import PackagePlugin

/// Embeds every file of the target's `Assets` folder (the web UI's page, script, style and
/// images) in its code: writes `EmbeddedAssets.swift` with each file's bytes as a base64
/// string literal under its file name, so the UI travels inside the binary and fetches
/// nothing from anywhere. Base64 in a string literal, not a `[UInt8]` literal as the specs
/// are: a script of tens of kilobytes as an array literal would take the type checker
/// minutes, a string literal costs nothing.
///
/// A POSIX shell script for the same reason as `EmbedSpecs`' (`--sanitize=fuzzer` links
/// every executable, generators included, against libFuzzer's `main`).
@main
struct EmbedAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SwiftSourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Assets")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") }.sorted().map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedAssets.swift")
        return [.buildCommand(
            displayName: "Embedding \(inputs.count) web UI assets of \(target.name)",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "embed-assets", folder.path, output.path],
            inputFiles: inputs + [context.package.directoryURL.appending(path: "Plugins/EmbedAssets/plugin.swift")],
            outputFiles: [output])]
    }

    /// `sh -c SCRIPT embed-assets FOLDER OUTPUT`. A name that is not a plain file name
    /// (letters, digits, `.`, `_`, `-`) stops the build rather than break the literal.
    static let script = #"""
        set -eu
        export LC_ALL=C
        folder=$1 out=$2
        new=$(
            echo "// Generated at build time by the EmbedAssets plugin from $(basename "$(dirname "$folder")")/Assets: do not edit."
            echo ""
            echo "/// The web UI's files, each as base64 under its file name, in file name order (LC_ALL=C)."
            echo "enum EmbeddedAssets {"
            echo "    static let files: [(name: String, base64: String)] = ["
            for file in "$folder"/*; do
                [ -f "$file" ] || continue
                name=$(basename "$file")
                case $name in .*|*[!A-Za-z0-9._-]*) echo "EmbedAssets: $file: unusable name" >&2; exit 1 ;; esac
                printf '        ("%s", "' "$name"
                base64 -w0 "$file"
                printf '"),\n'
            done
            echo "    ]"
            echo "}"
        )
        [ -f "$out" ] && [ "$(cat "$out")" = "$new" ] || printf '%s\n' "$new" > "$out"
        """#
}
