import Foundation

/// The built-in specs: the JSON files of `Sources/Lifecycle/Specs`, embedded in the binary
/// at build time (`EmbeddedSpecs`, written by the EmbedSpecs plugin), so a binary copied
/// anywhere has them. `$FAULTLINE_SPECS` names a folder whose `NAME.json` replaces the
/// embedded copy of built-in `NAME` (to try a change without rebuilding).
enum SpecFiles {
    static let overrideVariable = "FAULTLINE_SPECS"

    /// Every built-in name, in name order.
    static var names: [String] { EmbeddedSpecs.files.map(\.name).sorted() }

    /// The embedded bytes of built-in `name`, or nil for an unknown name.
    static func embedded(_ name: String) -> [UInt8]? {
        EmbeddedSpecs.files.first { $0.name == name }?.bytes
    }

    /// The override folder, `$FAULTLINE_SPECS`, or nil when unset or empty.
    static var overrideFolder: String? {
        ProcessInfo.processInfo.environment[overrideVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `FOLDER/NAME.json` when that file exists.
    static func overridePath(for name: String, in folder: String?) -> String? {
        guard let folder else { return nil }
        let path = folder + "/" + name + ".json"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }
}
