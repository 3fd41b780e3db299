import Glibc

/// A progress line on standard error for long runs (`analyze`, `export`, `synth`) when it
/// is a terminal: "analyze: 412.0 MB of 1.0 GB (40%), 85.3 MB/s, 7 s left", redrawn in
/// place at most four times a second, shown only once the run has taken `delay` seconds,
/// and cleared at the end. When standard error is not a terminal (a pipe, a CI log) it
/// prints nothing. Callers tick it cheaply per record; the clock is read every 1024 ticks.
public final class ProgressLine {
    /// Seconds before the line first shows: short runs stay silent. The environment
    /// variable FAULTLINE_PROGRESS_DELAY (seconds) changes it.
    public static var delay: Double {
        getenv("FAULTLINE_PROGRESS_DELAY").flatMap { Double(String(cString: $0)) }.map { max(0, $0) } ?? 1
    }

    let label: String
    let fd: Int32
    let started: Double
    let delay: Double
    var lastDraw: Double = 0
    var ticks = 0
    var shown = false
    /// Reads how far the run is: (done, total if known), in bytes.
    let measure: () -> (done: Int64, total: Int64?)

    /// Nil when `fd` (standard error) is not a terminal.
    public init?(label: String, fd: Int32 = STDERR_FILENO, measure: @escaping () -> (done: Int64, total: Int64?)) {
        guard isatty(fd) != 0 else { return nil }
        self.label = label
        self.fd = fd
        self.measure = measure
        started = Self.now()
        delay = Self.delay
    }

    /// Call once per unit of work (a record): redraws when due.
    public func tick() {
        ticks &+= 1
        guard ticks & 1023 == 0 else { return }
        let now = Self.now()
        guard now - started >= delay, now - lastDraw >= 0.25 else { return }
        lastDraw = now
        let (done, total) = measure()
        shown = true
        Console.write(fd: fd, "\r\u{1B}[K" + Self.text(label: label, done: done, total: total, elapsed: now - started))
    }

    /// Clears the line, if it was shown, so that what follows starts on a clean line.
    public func finish() {
        if shown { Console.write(fd: fd, "\r\u{1B}[K") }
        shown = false
    }

    /// "analyze: 412.0 MB of 1.0 GB (40%), 85.3 MB/s, 7 s left"; without a total, bytes
    /// and rate only.
    public static func text(label: String, done: Int64, total: Int64?, elapsed: Double) -> String {
        let rate = elapsed > 0 ? Double(max(done, 0)) / elapsed : 0
        var out = "\(label): \(bytes(Double(max(done, 0))))"
        if let total, total > 0 {
            let fraction = min(1, Double(max(done, 0)) / Double(total))
            out += " of \(bytes(Double(total))) (\(Int(fraction * 100))%)"
            out += ", \(bytes(rate))/s"
            if rate > 0, done < total {
                let left = Double(total - done) / rate
                out += ", \(left < 1e7 ? "\(Int(left.rounded(.up))) s" : "a long time") left"
            }
        } else {
            out += ", \(bytes(rate))/s"
        }
        return out
    }

    /// 999 B, 1.5 KB, 412.0 MB, 1.0 GB (powers of 1000, one decimal).
    static func bytes(_ n: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = n, unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        if unit == 0 { return "\(Int(value)) B" }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
