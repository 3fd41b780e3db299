import Capture
import Vocabulary

extension LifecycleSpec {
    /// When a client joins a channel again on a connection that stays up, after the
    /// channel crashed (the server's error event on it, Phoenix's `phx_error`), after its
    /// join went unanswered for `joinTimeout`, or, with `afterRefusal`, after the server
    /// refused the join: the spec's `channels.rejoin`, judged by `channels.rejoin`. The
    /// schedule is a backoff phase (kind, jitter, cap, floor), counted per channel from the
    /// last successful join: phoenix.js's `rejoinAfterMs` is stepped 1, 2, 5, then 10 s;
    /// phoenix-channels-python-client's `_channel_rejoin_delay` equal jitter of
    /// min(30, 0.5 * 2^(n-1)) s.
    public struct RejoinSchedule: Sendable, Hashable {
        /// The wait before rejoin n (from 1), as a reconnect phase's.
        public var schedule: BackoffPhase
        /// A join with no reply for this long has timed out, and is rejoined; nil: the
        /// client has no join timeout (or it is not judged).
        public var joinTimeout: Micros?
        /// Whether a join the server refused is retried on the schedule (phoenix.js), or
        /// the channel is given up (phoenix-channels-python-client).
        public var afterRefusal: Bool

        public init(schedule: BackoffPhase, joinTimeout: Micros?, afterRefusal: Bool) {
            self.schedule = schedule
            self.joinTimeout = joinTimeout
            self.afterRefusal = afterRefusal
        }
    }
}
