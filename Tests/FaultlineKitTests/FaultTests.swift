import FaultlineKit
import Faults
import Testing

/// The typed fault builders write the rules `faultline proxy --fault` takes, and the
/// proxy's parser reads back what they meant.
@Suite struct FaultTests {
    @Test func buildersWriteTheRuleSyntax() throws {
        let cases: [(FaultlineKit.Fault, String)] = [
            (.close(code: 4009, after: .seconds(3), reason: "terminated"), "close:4009,after=3s,reason=terminated"),
            (.close(code: 1011, after: .milliseconds(100)), "close:1011,after=100ms"),
            (.close(code: 4000, on: "bird:subscribe", to: .server), "close:4000,on=bird:subscribe,to=server"),
            (.drop(after: .microseconds(1500)), "drop,after=1500us"),
            (.reset(), "reset"),
            (.stallPongs(after: .seconds(5)).onConnection(2), "stall-pongs,after=5s,conn=2"),
            (.blackhole(after: .seconds(1)).lasting(.seconds(30)), "blackhole,after=1s,for=30s"),
            (.latency(.milliseconds(200), jitter: .milliseconds(50), direction: .serverToClient),
             "latency:200ms,jitter=50ms,dir=s2c"),
            (.refuse(code: 4001), "refuse:4001"),
            (.refuseHTTP(status: 503), "refuse-http:503"),
            (.stripSocketID().onConnections(2...4), "strip-socket-id,conn=2-4"),
            (.inject(json: #"{"event":"bird:error"}"#, to: .client), #"inject:{"event":"bird:error"},to=client"#),
            (.drop().forClients(matching: "okhttp").withProbability(0.5), "drop,client=okhttp,prob=0.5"),
            ("close:4009,after=5s", "close:4009,after=5s"),
        ]
        for (fault, text) in cases {
            #expect(fault.rule == text)
            #expect(throws: Never.self, "\(text)") { _ = try FaultRule.parse(fault.rule) }
        }
    }

    @Test func aReasonWithACommaOrQuoteIsQuotedAndReadBack() throws {
        let fault = FaultlineKit.Fault.close(code: 4009, reason: #"going away, "now""#)
        #expect(fault.rule == #"close:4009,reason="going away, \"now\"""#)
        let close = try CloseFault(try FaultRule.parse(fault.rule))
        #expect(close.reason == #"going away, "now""#)
    }

    @Test func aBadValueIsLeftToTheParserToRefuse() {
        #expect(throws: FaultRuleError.self) { try FaultRule.parse(FaultlineKit.Fault.close(code: 99999).rule) }
    }
}
