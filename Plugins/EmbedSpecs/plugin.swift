import Foundation
import PackagePlugin

/// Turns every `Specs/*.json` file of the target into `EmbeddedSpecs.swift` (see
/// EmbedSpecsTool), so the built-in specs travel inside the binary. The folder is listed
/// at each build, so a new JSON file there becomes a built-in spec with no other change.
@main
struct EmbedSpecs: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SwiftSourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Specs")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        let inputs = names.map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSpecs.swift")
        return [.buildCommand(
            displayName: "Embedding \(names.count) built-in specs",
            executable: try context.tool(named: "EmbedSpecsTool").url,
            arguments: [output.path] + inputs.map(\.path),
            inputFiles: inputs,
            outputFiles: [output])]
    }
}
