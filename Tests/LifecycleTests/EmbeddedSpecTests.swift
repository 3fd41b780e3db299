import Testing
import Foundation
@testable import Lifecycle

/// The built-in specs are embedded in the binary at build time (the EmbedSpecs plugin):
/// the embedded copies must be exactly the files of Sources/Lifecycle/Specs, all of them.
@Suite struct EmbeddedSpecTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/Lifecycle/Specs")

    @Test func embeddedCopiesEqualTheFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 3)
        #expect(SpecLoader.builtInNames == files.map { String($0.dropLast(".json".count)) }.sorted())
        for file in files {
            let name = String(file.dropLast(".json".count))
            let bytes = try #require(FileManager.default.contents(atPath: Self.folder.appendingPathComponent(file).path))
            let embedded = try #require(SpecFiles.embedded(name), "\(file) is not embedded")
            #expect(embedded == Array(bytes), "embedded \(name) differs from \(file)")
            // And each one loads: a built-in spec that does not parse would fail every run.
            #expect(try SpecLoader.load(name, overrides: nil).name == name)
        }
    }

    /// `$FAULTLINE_SPECS/NAME.json` replaces built-in NAME; a folder without it changes nothing.
    @Test func overrideFolderReplacesABuiltIn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("specs-override-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let changed = String(decoding: try #require(SpecFiles.embedded("bird")), as: UTF8.self).replacingOccurrences(
            of: "\"name\": \"bird\"", with: "\"name\": \"bird-override\"")
        #expect(FileManager.default.createFile(atPath: dir.appendingPathComponent("bird.json").path, contents: Data(changed.utf8)))
        #expect(try SpecLoader.load("bird", overrides: dir.path).name == "bird-override")
        #expect(try SpecLoader.load("bird", overrides: nil).name == "bird")
        #expect(try SpecLoader.load("agora-rtm", overrides: dir.path).name == "agora-rtm")
    }

    @Test func unknownNameIsReadAsAFileAndNamesTheBuiltIns() {
        let error = #expect(throws: SpecError.self) { try SpecLoader.load("no-such-spec") }
        #expect(error?.description == "no-such-spec: cannot read the spec file (expected a built-in name: "
            + SpecLoader.builtInNames.joined(separator: ", ") + ", or a JSON file)")
    }
}
