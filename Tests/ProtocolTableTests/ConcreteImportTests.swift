import Foundation
import Testing
import TestSupport

/// Only the protocol table knows the protocols: a concrete protocol module (each folder of
/// `Sources/Protocols` but `Interface` and `Table`: `Bird`, and every later entry) may be
/// imported only by the table, by itself, by the simulator (which speaks Bird), by the
/// fuzz targets and by the executable's wiring. Everything else reads `RealtimeEvent`s and
/// asks the `WireProtocol` interface. Checked on the sources and on Package.swift's
/// library dependencies, so that neither an `import Bird` nor a dependency slips back.
@Suite struct ConcreteImportTests {
    /// Source folders allowed to import concrete protocol modules.
    static let allowedFolders = ["Sources/Protocols/Table", "Sources/Sim", "Sources/Fuzz", "Sources/faultline"]
    /// Targets allowed to depend on them (the same folders' targets).
    static let allowedTargets: Set<String> = ["ProtocolTable", "Sim", "faultline", "faultline-fuzz"]

    static var concreteModules: [String] {
        let folder = TestEnvironment.path("Sources/Protocols")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0 != "Interface" && $0 != "Table" && !$0.hasPrefix(".") }.sorted()
    }

    @Test func theProtocolFoldersAreFound() {
        #expect(Self.concreteModules.contains("Bird"))
    }

    @Test func noSourceOutsideTheTableImportsAConcreteProtocol() throws {
        let modules = Self.concreteModules
        var violations: [String] = []
        let root = TestEnvironment.path("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        var scanned = 0
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let path = "Sources/" + relative
            let own = modules.map { "Sources/Protocols/\($0)" }
            if (Self.allowedFolders + own).contains(where: { path.hasPrefix($0 + "/") }) { continue }
            let text = try String(contentsOfFile: TestEnvironment.path(path), encoding: .utf8)
            scanned += 1
            violations += Self.imports(of: modules, in: text).map { "\(path): imports \($0)" }
        }
        #expect(scanned > 100)
        #expect(violations == [])
    }

    @Test func noLibraryOutsideTheTableDependsOnAConcreteProtocol() throws {
        let manifest = try String(contentsOfFile: TestEnvironment.path("Package.swift"), encoding: .utf8)
        let targets = Self.libraryDependencies(in: manifest)
        #expect(targets["Faults"] != nil && targets["Lifecycle"] != nil)
        let modules = Set(Self.concreteModules)
        let violations = targets.filter { !Self.allowedTargets.contains($0.key) && !modules.contains($0.key) }
            .compactMap { target, dependencies -> String? in
                let bad = dependencies.filter(modules.contains)
                return bad.isEmpty ? nil : "\(target) depends on \(bad.joined(separator: ", "))"
            }
        #expect(violations.sorted() == [])
    }

    /// The checks themselves catch what they must (else the two tests above prove nothing).
    @Test func theScannersSeeEveryFormOfImportAndDependency() {
        let text = "import Bird // why\n@testable import Bird\n@_exported import Bird\nimport struct Bird.BirdAuth\n"
            + "// import Bird (a comment)\nimport Birdseed\nimport Protocols\n"
        #expect(Self.imports(of: ["Bird"], in: text) == ["Bird", "Bird", "Bird", "Bird"])
        let manifest = #"""
            ("Faults", ["Vocabulary", "Bird", "Capture"], nil),
            ("Sim", ["Bird"], nil),
        """#
        #expect(Self.libraryDependencies(in: manifest) == ["Faults": ["Vocabulary", "Bird", "Capture"], "Sim": ["Bird"]])
    }

    /// The modules of `modules` that `text` imports, once per import line.
    static func imports(of modules: [String], in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            var words = line.split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { return nil }
            // `import struct Bird.BirdAuth`: the module is before the first dot.
            let kinds: Set<String> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
            let path = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            let module = String(path.split(separator: ".").first ?? "")
            return modules.contains(module) ? module : nil
        }
    }

    /// `("Name", ["Dep", ...], path)` lines of the manifest's library list: name -> dependencies.
    static func libraryDependencies(in manifest: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for line in manifest.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("(\""), let open = trimmed.firstIndex(of: "["),
                  let close = trimmed[open...].firstIndex(of: "]") else { continue }
            let name = trimmed.dropFirst(2).prefix { $0 != "\"" }
            let dependencies = trimmed[trimmed.index(after: open)..<close].split(separator: ",")
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }.filter { !$0.isEmpty }
            result[String(name)] = dependencies
        }
        return result
    }
}
