import CUV

/// A scheduled callback on an `EventLoop` (a `uv_timer_t`). Keep it to `cancel()`; dropping
/// it does not cancel. A one-shot timer frees itself after firing; a repeating timer lives
/// until `cancel()` or `EventLoop.close()`.
///
/// libuv timers have millisecond resolution and count from the loop's cached millisecond
/// time, so one can fire up to a millisecond before its delay has passed on `EventLoop.now`.
/// A timer therefore remembers its next deadline on `now` and, if libuv fires it early,
/// waits out the rest: it never fires early, and is late by at most libuv's resolution.
/// A repeating timer does the same for every tick.
/// Timers due at the same time fire in the order they were scheduled.
public final class TimerHandle: HandleOwner {
    private var timer: UnsafeMutablePointer<uv_timer_t>?
    private var body: (() -> Void)?
    private let repeats: Bool
    /// A repeating timer's period in microseconds (0 for a one-shot timer).
    private let period: Int64
    private unowned let loop: EventLoop
    /// When the timer is next due, on `loop.now`.
    private var deadline: Int64

    /// Whether the timer will still fire.
    public var isActive: Bool { timer != nil }

    init(loop: EventLoop, delay: Int64, repeatEvery: Int64?, body: @escaping () -> Void) {
        loop.assertOnLoopThread("EventLoop.schedule")
        self.body = body
        self.repeats = repeatEvery != nil
        self.period = repeatEvery ?? 0
        self.loop = loop
        self.deadline = loop.now + max(0, delay)
        let handle = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop.uvLoop, handle)  // cannot fail on an open loop
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        timer = handle
        uv_timer_start(handle, TimerHandle.fired, TimerHandle.milliseconds(delay), repeatEvery.map(TimerHandle.milliseconds) ?? 0)
    }

    /// libuv's callback: a C function pointer, so the timer is found through `handle.data`.
    private static let fired: uv_timer_cb = { handle in
        guard let me = TimerHandle.owner(of: CUV_handle(handle)) else { return }
        me.fire()
    }

    /// Microseconds to libuv's milliseconds, rounded up so a timer never fires early.
    /// A zero repeat would mean "no repeat" to libuv, so a repeating period is at least 1 ms.
    static func milliseconds(_ micros: Int64) -> UInt64 {
        micros <= 0 ? 0 : UInt64((micros + 999) / 1000)
    }

    private func fire() {
        guard let body, let handle = timer else { return }
        let remaining = deadline - loop.now
        if remaining > 0 {
            // Early by up to libuv's millisecond: wait out the rest, then keep the period.
            uv_timer_start(handle, TimerHandle.fired, TimerHandle.milliseconds(remaining),
                           repeats ? TimerHandle.milliseconds(period) : 0)
            return
        }
        if repeats {
            // The next tick is due a period after this one was due (or after now, when
            // this one ran more than a period late).
            deadline = max(deadline + period, loop.now)
            body()
        } else {
            cancel()
            body()
        }
    }

    /// Stops the timer; its callback will not run again. Idempotent.
    public func cancel() {
        guard let handle = timer else { return }
        timer = nil
        body = nil
        uv_close(CUV_handle(handle)) { handle in
            _ = TimerHandle.release(from: handle)
            UV.freeOnClose(handle)
        }
    }

    func closeForLoopShutdown() { cancel() }
}

extension EventLoop {
    /// Runs `body` once on the loop thread after `delay` microseconds.
    @discardableResult
    public func schedule(after delay: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        TimerHandle(loop: self, delay: delay, repeatEvery: nil, body: body)
    }

    /// Runs `body` every `interval` microseconds (first after `initialDelay`, default one
    /// interval) until the returned handle is cancelled.
    @discardableResult
    public func scheduleRepeating(every interval: Int64, initialDelay: Int64? = nil,
                                  _ body: @escaping () -> Void) -> TimerHandle {
        TimerHandle(loop: self, delay: initialDelay ?? interval, repeatEvery: max(interval, 1000), body: body)
    }
}
