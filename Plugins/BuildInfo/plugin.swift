import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` with the commit the package is built from, for
/// `faultline --version`. A build command whose inputs are git's HEAD, the branch's ref,
/// packed-refs and the index (so a commit or a checkout re-runs it) and every Swift source
/// of the package (so "-modified", for changes not committed, follows edits). The source
/// is rewritten only when it changes. With no git, or outside a checkout (a source
/// tarball), the commit is "unknown".
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        // This file too: SwiftPM does not re-run a command whose script alone changed.
        var inputs = Self.gitFiles(package) + [package.appending(path: "Plugins/BuildInfo/plugin.swift")]
        for case let module as SourceModuleTarget in context.package.targets {
            inputs += module.sourceFiles(withSuffix: "swift").map(\.url)
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        return [.buildCommand(
            displayName: "Reading the commit for --version",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "build-info", package.path, output.path],
            inputFiles: inputs.filter { FileManager.default.fileExists(atPath: $0.path) },
            outputFiles: [output])]
    }

    /// HEAD, index, the branch's ref file and packed-refs of the checkout at `package`:
    /// `.git` is a folder, or in a linked worktree a file `gitdir: PATH` whose folder names
    /// the shared one in `commondir`.
    static func gitFiles(_ package: URL) -> [URL] {
        let dotGit = package.appending(path: ".git")
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isFolder) else { return [] }
        var gitDir = dotGit
        if !isFolder.boolValue {
            guard let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir: ") else { return [] }
            let path = text.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDir = path.hasPrefix("/") ? URL(fileURLWithPath: path) : package.appending(path: path)
        }
        var common = gitDir
        if let text = try? String(contentsOf: gitDir.appending(path: "commondir"), encoding: .utf8) {
            let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
            common = path.hasPrefix("/") ? URL(fileURLWithPath: path) : gitDir.appending(path: path)
        }
        var files = [gitDir.appending(path: "HEAD"), gitDir.appending(path: "index"), common.appending(path: "packed-refs")]
        if let head = try? String(contentsOf: gitDir.appending(path: "HEAD"), encoding: .utf8), head.hasPrefix("ref: ") {
            files.append(common.appending(path: head.dropFirst("ref: ".count).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return files
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
