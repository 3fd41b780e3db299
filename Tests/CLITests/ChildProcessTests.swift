import Glibc
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

/// Children are spawned by `posix_spawn`, not Foundation's `Process`, whose `run()` faulted
/// intermittently while listing this process's descriptors (a CI run died of it). What the
/// child gets is checked from inside it.
@Suite struct SpawnedChildTests {
    /// The child (the shell, whose descriptors its `ls` lists) has stdin, stdout and stderr
    /// only, however many descriptors this process holds.
    @Test func theChildInheritsNoDescriptorBeyondTheThreeStandardOnes() throws {
        let held = (0..<200).compactMap { _ in fopen("/dev/null", "r") }
        defer { held.forEach { fclose($0) } }
        let result = try runCommand("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").sorted() == ["0", "1", "2"], "\(result.stdout)")
    }

    /// No signal blocked, whatever the test thread's mask, so SIGTERM and SIGINT reach it.
    @Test func theChildStartsWithNoSignalBlocked() throws {
        let result = try runCommand("/bin/sh", ["-c", "exec grep SigBlk /proc/self/status"])
        #expect(result.stdout == "SigBlk:\t0000000000000000", "\(result.stdout)")
    }

    @Test func theEnvironmentAndDirectoryAreTheChildren() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo \"$FAULTLINE_SPAWN_TEST\"; pwd"],
                                     environment: ["FAULTLINE_SPAWN_TEST": "a b=c"], currentDirectory: "/usr")
        #expect(child.waitForExit(timeout: 60) == 0)
        #expect(child.output == ["a b=c", "/usr"])
    }

    /// A killed child reports the signal as its status (as Foundation did); a missing
    /// executable is a thrown error naming it.
    @Test func aKilledChildReportsTheSignalAndAMissingOneThrows() throws {
        let child = try ChildProcess("/bin/sleep", ["60"])
        child.signal(SIGKILL)
        #expect(child.waitForExit(timeout: 60) == SIGKILL)
        #expect(throws: (any Error).self) { _ = try ChildProcess("/nonexistent/faultline-test", []) }
        #expect(throws: (any Error).self) { _ = try ChildProcess("/bin/sh", [], currentDirectory: "/nonexistent") }
    }
}
