import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` with the commit the package is built from, for
/// `faultline --version`. A prebuild command, so it runs at every build and a new commit
/// is picked up without a clean build; the file is rewritten only when it changes. With no
/// git, or outside a checkout (a source tarball), the commit is "unknown"; with changes not
/// committed, it ends in "-modified".
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        return [.prebuildCommand(
            displayName: "Reading the commit for --version",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "build-info", context.package.directoryURL.path,
                        output.appending(path: "BuildInfo.swift").path],
            outputFilesDirectory: output)]
    }

    /// `sh -c SCRIPT build-info PACKAGE_DIR OUTPUT`.
    static let script = #"""
        dir=$(cd "$1" && pwd -P) out=$2
        git() { command git -c safe.directory="$dir" -C "$dir" "$@"; }
        commit=unknown
        if top=$(git rev-parse --show-toplevel 2>/dev/null) && [ "$(cd "$top" && pwd -P)" = "$dir" ] \
            && head=$(git rev-parse --short=12 HEAD 2>/dev/null); then
            commit=$head
            [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit-modified"
        fi
        new=$(printf '%s\n' "// Generated at build time by the BuildInfo plugin: do not edit." \
            "" "/// What this binary was built from, for \`faultline --version\`." \
            "enum BuildInfo {" "    static let commit = \"$commit\"" "}")
        [ -f "$out" ] && [ "$(cat "$out")" = "$new" ] || printf '%s\n' "$new" > "$out"
        """#
}
