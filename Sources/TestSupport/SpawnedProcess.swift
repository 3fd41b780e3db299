import CSpawn
import Foundation
import Glibc

/// A child process started with `posix_spawn`, reaped by a thread of its own.
///
/// Why not Foundation's `Process`: on this toolchain its `run()` lists `/proc/self/fd` to
/// close inherited descriptors and copies each `dirent` whole, reading past the end of
/// glibc's readdir buffer; with many descriptors open (a full test run has over a thousand)
/// that intermittently faults (SIGSEGV in `Process.run`, swift-corelibs-foundation #5472,
/// fixed after 6.3.1). Here the child closes everything from 3 up by one file action.
///
/// The pid is never signalled after it was reaped, so it cannot hit a reused pid: the
/// reaper waits for the exit without reaping (`WNOWAIT`), then reaps under the lock that
/// `signal` takes.
final class SpawnedProcess: @unchecked Sendable {
    // @unchecked: `status` is read and written with `condition` locked; `pid` is immutable.
    let pid: pid_t
    private let condition = NSCondition()
    /// The exit status (or the signal that ended it), once reaped.
    private var status: Int32?

    /// Starts `executable` with its standard output and error on the given descriptors
    /// (duplicated into the child) and standard input on /dev/null. The child gets its own
    /// process group, an empty signal mask and default signal dispositions (a child started
    /// from a Swift Testing thread could otherwise inherit SIGTERM blocked).
    init(executable: String, arguments: [String], environment: [String: String], currentDirectory: String?,
         standardOutput: Int32, standardError: Int32) throws {
        var actions = posix_spawn_file_actions_t()
        try Self.check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(&actions) }
        try Self.check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "addopen /dev/null")
        try Self.check(posix_spawn_file_actions_adddup2(&actions, standardOutput, 1), "adddup2 stdout")
        try Self.check(posix_spawn_file_actions_adddup2(&actions, standardError, 2), "adddup2 stderr")
        try Self.check(posix_spawn_file_actions_addclosefrom_np(&actions, 3), "addclosefrom_np")
        if let currentDirectory {
            try Self.check(posix_spawn_file_actions_addchdir_np(&actions, currentDirectory), "addchdir_np \(currentDirectory)")
        }

        var attributes = posix_spawnattr_t()
        try Self.check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), everySignal = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&everySignal)
        try Self.check(posix_spawnattr_setsigmask(&attributes, &noSignals), "setsigmask")
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &everySignal), "setsigdefault")
        try Self.check(posix_spawnattr_setpgroup(&attributes, 0), "setpgroup")
        let flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP
        try Self.check(posix_spawnattr_setflags(&attributes, Int16(flags)), "setflags")

        let argv = CStringArray([executable] + arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" })
        var child = pid_t()
        try Self.check(posix_spawn(&child, executable, &actions, &attributes, argv.pointers, envp.pointers),
                       "posix_spawn \(executable)")
        pid = child

        let thread = Thread { [self] in reap() }
        thread.name = "SpawnedProcess reaper \(child)"
        thread.start()
    }

    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return status == nil
    }

    /// The exit status, or the number of the signal that ended it (as Foundation's
    /// `terminationStatus`); nil while it runs.
    var terminationStatus: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    /// Waits until the child was reaped or `deadline` passed; its status, or nil.
    func wait(until deadline: Date) -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        while status == nil, condition.wait(until: deadline) {}
        return status
    }

    /// Sends `signal` if the child has not been reaped (so its pid is still its own).
    func signal(_ signal: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if status == nil { kill(pid, signal) }
    }

    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        condition.lock()
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        // Low 7 bits: 0 for a normal exit (status in the next byte), else the signal.
        status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
        condition.broadcast()
        condition.unlock()
    }

    /// A pipe whose two ends are close-on-exec from the start, so a child spawned by
    /// another thread at the same moment never inherits them.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try check(pipe2(&fds, O_CLOEXEC) == 0 ? 0 : errno, "pipe2")
        return (fds[0], fds[1])
    }

    private static func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(result),
                          userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(result)))"])
        }
    }
}

/// A NULL-terminated array of C strings that lives as long as the value.
private final class CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
