import Foundation

/// Finds the built-in spec files. SwiftPM copies them into a resource bundle next to the
/// executable (what `Bundle.module` finds); a binary copied elsewhere falls back to a
/// `specs` folder beside it, `$FAULTLINE_SPECS`, or the repository's source folder.
enum SpecFiles {
    static let bundleName = "Faultline_Lifecycle.resources"

    static func searchedDirectories() -> [String] {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["FAULTLINE_SPECS"] { dirs.append(env) }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
            .deletingLastPathComponent().path
        let mainBundle = Bundle.main.bundlePath
        for base in [mainBundle, executable] {
            dirs.append(base + "/" + bundleName + "/Specs")
            dirs.append(base + "/" + bundleName)
            dirs.append(base + "/specs")
        }
        // Bundle.module aborts when its bundle is missing, so ask it only when it exists.
        if FileManager.default.fileExists(atPath: mainBundle + "/" + bundleName),
           let url = Bundle.module.url(forResource: "bird", withExtension: "json", subdirectory: "Specs") {
            dirs.insert(url.deletingLastPathComponent().path, at: 0)
        }
        // The repository this file was built from (a binary run from a checkout).
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        dirs.append(source.path + "/Specs")
        dirs.append(FileManager.default.currentDirectoryPath + "/Sources/Lifecycle/Specs")
        return dirs
    }

    static func path(ofBuiltIn name: String) -> String? {
        for dir in searchedDirectories() {
            let path = dir + "/" + name + ".json"
            if FileManager.default.isReadableFile(atPath: path) { return path }
        }
        return nil
    }
}
