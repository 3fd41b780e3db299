import Testing
import WebSocket

/// Idle connections that never send a request must not starve established ones (issue 15, item 7).
@Suite struct ConnectionAdmissionTests {
    @Test func admitsBelowBothBounds() {
        let admission = ConnectionAdmission(maxConnections: 10, maxPending: 4)
        #expect(admission.decide(open: 0, pending: 0) == .admit)
        #expect(admission.decide(open: 9, pending: 3) == .admit)
    }

    @Test func aFullPendingBoundEvictsTheOldestPendingEvenWithFreeSlots() {
        let admission = ConnectionAdmission(maxConnections: 10, maxPending: 4)
        #expect(admission.decide(open: 4, pending: 4) == .admitEvictingOldestPending)
    }

    @Test func idleConnectionsFillingEverySlotAreEvictedNotTheNewClientRefused() {
        // N idle sockets at --max-connections N: a real client still gets in.
        let admission = ConnectionAdmission(maxConnections: 3, maxPending: 3)
        #expect(admission.decide(open: 3, pending: 3) == .admitEvictingOldestPending)
        #expect(admission.decide(open: 3, pending: 1) == .admitEvictingOldestPending)
    }

    @Test func onlyEstablishedConnectionsAtTheLimitRefuse() {
        let admission = ConnectionAdmission(maxConnections: 3, maxPending: 3)
        #expect(admission.decide(open: 3, pending: 0) == .refuse)
    }

    @Test func thePendingBoundNeverExceedsTheConnectionBound() {
        #expect(ConnectionAdmission(maxConnections: 2, maxPending: 100).maxPending == 2)
        #expect(ConnectionAdmission(maxConnections: 0, maxPending: 0).maxPending == 1)
    }
}
