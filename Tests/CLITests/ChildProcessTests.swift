import Testing
import TestSupport

/// The test helper that runs children reads both pipes to end-of-file (issue 15, item 20):
/// it used to give up 5 s after the child's exit, so on a loaded machine a test could see
/// empty output. Here the output comes 6 s after the exit, from a grandchild holding the
/// pipe: it must be there.
@Suite struct ChildProcessTests {
    @Test func outputIsReadToEndOfFileAfterTheExit() throws {
        let result = try runCommand("/bin/sh", ["-c", "(sleep 6; echo late; echo late-err >&2) & echo early"], timeout: 60)
        #expect(result.status == 0)
        #expect(result.stdout == "early\nlate")
        #expect(result.stderr == "late-err")
    }

    @Test func waitForLineWakesOnTheLineAndStopsAtEndOfFile() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo one; sleep 1; echo two"])
        #expect(child.waitForLine(timeout: 60) { $0 == "two" } == "two")
        #expect(child.waitForLine(timeout: 60) { $0 == "never" } == nil)
        #expect(child.waitForExit(timeout: 60) == 0)
    }
}
