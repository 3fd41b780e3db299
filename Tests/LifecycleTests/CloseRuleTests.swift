import Testing
import Capture
@testable import Lifecycle

@Suite struct CloseRuleTests {
    @Test func reconnectAfter4200MustBeImmediate() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 10, from: .server, code: 4200)
        wire.connect(at: 13)
        let out = try analyze(wire, end: 20)
        #expect(out.rules() == ["close.immediate-retry"])
        #expect(out.findings.first?.message == "delay 3.00 s > bound 0.50 s after close 4200 from server")
    }

    @Test func immediateReconnectAfter4200IsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 10, from: .server, code: 4201)
        wire.connect(at: 10.2)
        #expect(try analyze(wire, end: 20).findings.isEmpty)
    }

    @Test func retryAfterRefusalIsReportedWithTheInjectedFault() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.fault(a, at: 10, rule: "close:4009,after=10s", kind: "close")
        wire.close(a, at: 10, from: .server, code: 4009, action: .injected, fault: "close:4009,after=10s")
        wire.connect(at: 15)
        let out = try analyze(wire, end: 20)
        let f = try #require(out.findings("failed.retried").first)
        #expect(f.message.hasPrefix("new connection 5.00 s after close 4009 from server"))
        // The fault made the close; retrying after it is the client's own bug (issue 17 item 8).
        #expect(f.causedByFault == nil)
        #expect(f.afterFault == "close:4009,after=10s")
        #expect(f.faultNote == "after injected fault close:4009,after=10s")
        #expect(out.findings.count == 1)
    }

    @Test func refusalWithoutRetryIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 10, from: .server, code: 4001)
        let out = try analyze(wire, end: 60)
        #expect(out.findings.isEmpty)
        #expect(out.transitions.last?.to == "failed")
    }

    @Test func reconnectAfterDisconnectIsNotABackoffAttempt() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 10, from: .client, code: 1000)
        wire.connect(at: 100)
        let out = try analyze(wire, end: 110)
        #expect(out.findings.isEmpty)
        #expect(out.transitions.map(\.to).contains("disconnected"))
    }
}
