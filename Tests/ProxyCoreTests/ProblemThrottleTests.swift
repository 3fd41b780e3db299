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

@Suite struct DescriptorBudgetTests {
    @Test func keepsAnEighthOfTheLimitFreeWithinBounds() {
        #expect(DescriptorBudget.headroom(limit: 40) == 5)
        #expect(DescriptorBudget.headroom(limit: 1024) == 64)
        #expect(DescriptorBudget.headroom(limit: 10) == 4)
        #expect(!DescriptorBudget.isNearLimit(descriptor: 34, limit: 40))
        #expect(DescriptorBudget.isNearLimit(descriptor: 35, limit: 40))
        #expect(!DescriptorBudget.isNearLimit(descriptor: 1_000_000, limit: nil))
    }
}
