import ProxyCore
import Testing

@Suite struct ProblemThrottleTests {
    @Test func firstAtOnceThenOneReportPerIntervalWithTheCount() {
        var throttle = ProblemThrottle(interval: 1_000)
        #expect(throttle.occurred(now: 0) == 1)
        #expect(throttle.occurred(now: 10) == nil)
        #expect(throttle.occurred(now: 999) == nil)
        #expect(throttle.occurred(now: 1_000) == 3)
        #expect(throttle.occurred(now: 1_500) == nil)
        #expect(throttle.occurred(now: 5_000) == 2)
    }

    @Test func timesNearTheEndOfTheClockDoNotTrap() {
        var throttle = ProblemThrottle(interval: .max)
        #expect(throttle.occurred(now: 5) == 1)
        #expect(throttle.occurred(now: .max) == nil)
    }
}
