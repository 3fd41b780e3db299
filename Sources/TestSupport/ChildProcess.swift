import Foundation
import Glibc

/// A child process for tests: output collected line by line on background threads, every
/// wait bounded, stopped with SIGKILL (a child started from a Swift Testing test may inherit
/// a signal mask with SIGTERM blocked, so `terminate()` is not reliable; see swift-notes.md).
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `lines` and `finished` are guarded by `lock`; `process` is set up before start.
    private let process = Process()
    private let lock = NSLock()
    private var stdoutLines: [String] = []
    private var stderrLines: [String] = []
    private var stdoutPartial = Data()
    private var stderrPartial = Data()
    /// Pipes that reached end-of-file; output is complete once both have.
    private var closedPipes = 0

    public let commandLine: String

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                currentDirectory: String? = nil) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.collect(data, stderr: false)
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.collect(data, stderr: true)
        }
        try process.run()
    }

    /// Starts the `faultline` binary under test.
    public static func faultline(_ arguments: [String], environment: [String: String]? = nil) throws -> ChildProcess {
        try ChildProcess(TestEnvironment.faultlineBinary, arguments, environment: environment)
    }

    /// Starts a Python script with the test venv's interpreter, unbuffered.
    public static func python(_ script: String, _ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess(TestEnvironment.python, ["-u", script] + arguments)
    }

    public var pid: Int32 { process.processIdentifier }

    private func collect(_ data: Data, stderr: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if data.isEmpty {
            // End of file: keep a last line without a newline, and count the pipe as drained.
            closedPipes += 1
            if stderr, !stderrPartial.isEmpty { stderrLines.append(String(decoding: stderrPartial, as: UTF8.self)); stderrPartial = Data() }
            if !stderr, !stdoutPartial.isEmpty { stdoutLines.append(String(decoding: stdoutPartial, as: UTF8.self)); stdoutPartial = Data() }
            return
        }
        if stderr { stderrPartial.append(data) } else { stdoutPartial.append(data) }
        func split(_ partial: inout Data, into lines: inout [String]) {
            while let newline = partial.firstIndex(of: 0x0A) {
                lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                partial = Data(partial[partial.index(after: newline)...])
            }
        }
        if stderr { split(&stderrPartial, into: &stderrLines) } else { split(&stdoutPartial, into: &stdoutLines) }
    }

    private var drainedPipes: Int { lock.lock(); defer { lock.unlock() }; return closedPipes }

    /// Complete lines printed so far.
    public var output: [String] { lock.lock(); defer { lock.unlock() }; return stdoutLines }
    public var errorOutput: [String] { lock.lock(); defer { lock.unlock() }; return stderrLines }

    /// Waits until a stdout (or stderr) line satisfies `predicate`; nil after `timeout` seconds.
    @discardableResult
    public func waitForLine(timeout: Double = 10, stderr: Bool = false, where predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = (stderr ? errorOutput : output).first(where: predicate) { return line }
            usleep(10_000)
        }
        return nil
    }

    /// Waits for the process to exit; its status, or nil if it was still running at `timeout`.
    public func waitForExit(timeout: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        // The output is complete only when both pipes reached end-of-file (a grandchild that
        // inherited them could hold them open, so this wait is bounded too).
        let drainDeadline = Date().addingTimeInterval(5)
        while drainedPipes < 2, Date() < drainDeadline { usleep(5_000) }
        return process.terminationStatus
    }

    /// Sends a signal (SIGINT to test graceful shutdown, SIGKILL to test crash safety).
    public func signal(_ signal: Int32) { if process.isRunning { kill(process.processIdentifier, signal) } }

    /// Kills the process if it still runs and reaps it (bounded).
    public func stop() {
        signal(SIGKILL)
        _ = waitForExit(timeout: 5)
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

/// Runs a command to completion (bounded) and returns its status and output.
public func runCommand(_ executable: String, _ arguments: [String], timeout: Double = 60,
                       environment: [String: String]? = nil) throws -> (status: Int32?, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    let status = child.waitForExit(timeout: timeout)
    if status == nil { child.stop() }
    return (status, child.output.joined(separator: "\n"), child.errorOutput.joined(separator: "\n"))
}

/// Runs `faultline` with arguments to completion (bounded).
public func runFaultline(_ arguments: [String], timeout: Double = 60) throws -> (status: Int32?, stdout: String, stderr: String) {
    try runCommand(TestEnvironment.faultlineBinary, arguments, timeout: timeout)
}
