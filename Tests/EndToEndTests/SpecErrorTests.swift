import Foundation
import Testing
import TestSupport

/// Errors about a spec name where it came from: `--spec` only when the user gave it, the
/// `$FAULTLINE_SPECS` file when that replaced a built-in.
@Suite struct SpecErrorTests {
    @Test func theDefaultSpecsErrorDoesNotBlameSpec() throws {
        let dir = TestEnvironment.temporaryDirectory("spec-error")
        let bird = dir.appendingPathComponent("bird.json").path
        #expect(FileManager.default.createFile(atPath: bird, contents: Data("{ not json".utf8)))
        let capture = TestEnvironment.path("Captures/clean.jsonl")
        let result = try runCommand(TestEnvironment.faultlineBinary, ["analyze", capture], environment: ["FAULTLINE_SPECS": dir.path])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("faultline analyze: \(bird): not valid JSON"), "\(result.stderr)")

        let given = try runCommand(TestEnvironment.faultlineBinary, ["analyze", capture, "--spec", "no-such-spec"])
        #expect(given.status == 2)
        #expect(given.stderr.hasPrefix("faultline analyze: --spec: no-such-spec: cannot read the spec file (expected a built-in name: agora-rtm, agora-rtm-stream, bird"), "\(given.stderr)")
    }
}
