import Foundation
import Glibc

/// A child process for tests: started by `SpawnedProcess` (posix_spawn, not Foundation's
/// `Process`), both output pipes read to end-of-file by two threads of their own, every
/// wait bounded, stopped with SIGKILL.
///
/// No wait stands in for an event: a line is waited for on a condition signalled when it
/// arrives, and `waitForExit` returns only once the child exited and both pipes reached
/// end-of-file (the reading threads are joined), so the output it hands back is complete
/// however loaded the machine is. (It used to poll a dispatch handler's output for a fixed
/// 5 s after the exit; on a loaded machine `analyze`'s JSON arrived later than that, empty.)
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is set once in init; it and `collected` lock themselves.
    private let process: SpawnedProcess
    private let collected = CollectedOutput()
    /// Left once per pipe at its end-of-file: waiting on it joins the two reading threads.
    private let readers = DispatchGroup()

    public let commandLine: String

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                currentDirectory: String? = nil) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")
        // Made absolute against this process's directory, as Foundation's `Process` did:
        // the child changes to `currentDirectory` before it executes the path.
        let path = URL(fileURLWithPath: executable).path
        let merged = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 }
        // Close-on-exec; the child gets the write ends as 1 and 2 by dup2.
        let out = try SpawnedProcess.pipe(), err = try SpawnedProcess.pipe()
        do {
            process = try SpawnedProcess(executable: path, arguments: arguments, environment: merged,
                                         currentDirectory: currentDirectory,
                                         standardOutput: out.write, standardError: err.write)
        } catch {
            for fd in [out.read, out.write, err.read, err.write] { close(fd) }
            throw error
        }
        close(out.write)
        close(err.write)
        // The threads hold the pipes' read ends and the collected output, never `self`:
        // a test that drops its child still gets it killed by `deinit`.
        for (fd, isStderr) in [(out.read, false), (err.read, true)] {
            readers.enter()
            let output = collected, readers = self.readers
            let thread = Thread {
                output.readToEnd(fd, stderr: isStderr)
                close(fd)
                readers.leave()
            }
            thread.name = "ChildProcess \(isStderr ? "stderr" : "stdout")"
            thread.start()
        }
    }

    /// Starts the `faultline` binary under test.
    public static func faultline(_ arguments: [String], environment: [String: String]? = nil) throws -> ChildProcess {
        try ChildProcess(TestEnvironment.faultlineBinary, arguments, environment: environment)
    }

    /// Starts a Python script with the test venv's interpreter, unbuffered.
    public static func python(_ script: String, _ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess(TestEnvironment.python, ["-u", script] + arguments)
    }

    public var pid: Int32 { process.pid }

    /// Complete lines printed so far.
    public var output: [String] { collected.lines(stderr: false) }
    public var errorOutput: [String] { collected.lines(stderr: true) }

    /// Waits until a stdout (or stderr) line satisfies `predicate`; nil after `timeout`
    /// seconds, or when the pipe ended without such a line.
    @discardableResult
    public func waitForLine(timeout: Double = 30, stderr: Bool = false, where predicate: (String) -> Bool) -> String? {
        collected.waitForLine(until: Date().addingTimeInterval(timeout), stderr: stderr, where: predicate)
    }

    /// Waits for the process to exit and for its output to be complete (both pipes at
    /// end-of-file, the reading threads joined); its status, or nil if it was still running
    /// at `timeout`. A grandchild that inherited the pipes could hold them open: that wait
    /// is bounded too, by the same deadline but never less than 60 s.
    public func waitForExit(timeout: Double = 60) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        guard let status = process.wait(until: deadline) else { return nil }
        _ = readers.wait(timeout: .now() + max(deadline.timeIntervalSinceNow, 60))
        return status
    }

    /// Sends a signal (SIGINT to test graceful shutdown, SIGKILL to test crash safety).
    public func signal(_ signal: Int32) { process.signal(signal) }

    /// Kills the process if it still runs and reaps it (bounded).
    public func stop() {
        signal(SIGKILL)
        _ = waitForExit(timeout: 30)
    }

    deinit { process.signal(SIGKILL) }
}

/// Both pipes' lines, filled by the reading threads; waiters sleep on `condition`.
private final class CollectedOutput: @unchecked Sendable {
    // @unchecked: every field is read and written with `condition` locked.
    private let condition = NSCondition()
    private var stdoutLines: [String] = []
    private var stderrLines: [String] = []
    private var ended = [false, false]

    /// Reads `fd` until end-of-file (or an error), splitting it into lines as it comes.
    func readToEnd(_ fd: Int32, stderr: Bool) {
        var partial: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            partial.append(contentsOf: buffer[0..<count])
            var lines: [String] = []
            var start = 0
            while let newline = partial[start...].firstIndex(of: 0x0A) {
                lines.append(String(decoding: partial[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            partial.removeFirst(start)
            if !lines.isEmpty { append(lines, stderr: stderr, end: false) }
        }
        // End of file: a last line without a newline is kept.
        append(partial.isEmpty ? [] : [String(decoding: partial, as: UTF8.self)], stderr: stderr, end: true)
    }

    private func append(_ lines: [String], stderr: Bool, end: Bool) {
        condition.lock()
        if stderr { stderrLines += lines } else { stdoutLines += lines }
        if end { ended[stderr ? 1 : 0] = true }
        condition.broadcast()
        condition.unlock()
    }

    func lines(stderr: Bool) -> [String] {
        condition.lock()
        defer { condition.unlock() }
        return stderr ? stderrLines : stdoutLines
    }

    /// The predicate runs without the lock held: tests' predicates read `output` and
    /// `errorOutput` themselves, which take the lock (held, it deadlocked). Every line is
    /// looked at again on each wake-up, since a predicate may depend on other state.
    func waitForLine(until deadline: Date, stderr: Bool, where predicate: (String) -> Bool) -> String? {
        let index = stderr ? 1 : 0
        while true {
            condition.lock()
            let lines = stderr ? stderrLines : stdoutLines
            let seen = stdoutLines.count + stderrLines.count
            let finished = ended[index]
            condition.unlock()
            if let line = lines.first(where: predicate) { return line }
            if finished { return nil }
            if Date() >= deadline { return nil }
            // Woken by a line, or every 100 ms for predicates that look at other state.
            condition.lock()
            if stdoutLines.count + stderrLines.count == seen, !ended[index] {
                _ = condition.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
            }
            condition.unlock()
        }
    }
}

/// Runs a command to completion (bounded) and returns its status and output.
public func runCommand(_ executable: String, _ arguments: [String], timeout: Double = 120,
                       environment: [String: String]? = nil) throws -> (status: Int32?, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    let status = child.waitForExit(timeout: timeout)
    if status == nil { child.stop() }
    return (status, child.output.joined(separator: "\n"), child.errorOutput.joined(separator: "\n"))
}

/// Runs `faultline` with arguments to completion (bounded).
public func runFaultline(_ arguments: [String], timeout: Double = 120) throws -> (status: Int32?, stdout: String, stderr: String) {
    try runCommand(TestEnvironment.faultlineBinary, arguments, timeout: timeout)
}
