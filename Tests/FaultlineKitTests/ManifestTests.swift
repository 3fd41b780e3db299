import Foundation
import Testing
import TestSupport

/// FaultlineKit must be usable as a versioned SwiftPM dependency, not only by path: SwiftPM
/// refuses a dependency whose targets use unsafe flags, and the kit's targets (it reads
/// captures and pcaps, so it reaches most library modules) are this manifest's.
@Suite struct ManifestTests {
    @Test func theManifestUsesNoUnsafeFlags() throws {
        let manifest = try String(contentsOfFile: TestEnvironment.path("Package.swift"), encoding: .utf8)
        #expect(!manifest.contains("unsafeFlags"), "Package.swift uses unsafeFlags: FaultlineKit could not be a versioned dependency")
    }
}
