import Testing
import TestSupport

/// `Tools/demo`, the README's "run it" command, run as a user runs it: it announces its
/// three steps and ends with the demo's verdict. `FAULTLINE_DEMO_BUILT` makes it run the
/// binary this test run already built (the debug one) instead of building a release one,
/// which would cost minutes here.
@Suite struct DemoScriptTests {
    static let script = TestEnvironment.path("Tools/demo")
    /// The configuration of the binary under test.
    static let configuration = TestEnvironment.faultlineBinary.contains("/release/") ? "release" : "debug"

    @Test func theScriptAnnouncesItsStepsAndEndsWithTheDemosVerdict() throws {
        let out = TestEnvironment.temporaryDirectory("faultline-demo-script").appendingPathComponent("out").path
        let arguments = ["--duration", "10s", "--out", out, "--seed", "3"]
        let result = try runCommand(Self.script, arguments, timeout: 150,
                                    environment: ["FAULTLINE_DEMO_BUILT": Self.configuration])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let steps = result.stderr.split(separator: "\n").filter { $0.hasPrefix("demo: ") }
        #expect(steps == [
            "demo: 1/3 checking the Debian packages and the Python test peers (Tools/setup)",
            "demo: 2/3 using the already-built .build/\(Self.configuration)/faultline (FAULTLINE_DEMO_BUILT)",
            "demo: 3/3 running .build/\(Self.configuration)/faultline demo \(arguments.joined(separator: " "))",
        ], "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("summary: 5 clients, ") }, "\(result.stdout)")
        #expect(lines.last == "demo: ran as designed: every fault had its effect and the analyzer caught the bug",
                "\(result.stdout)")
    }

    @Test func anUnknownConfigurationIsRefusedBeforeAnyStep() throws {
        let result = try runCommand(Self.script, [], timeout: 30, environment: ["FAULTLINE_DEMO_BUILT": "fast"])
        #expect(result.status == 2)
        #expect(result.stderr == "demo: FAULTLINE_DEMO_BUILT must be 'debug' or 'release', not 'fast'", "\(result.stderr)")
    }
}
