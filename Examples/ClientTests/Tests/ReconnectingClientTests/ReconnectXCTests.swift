import FaultlineKit
import Foundation
import ReconnectingClient
import XCTest

/// The same client test for a suite still on XCTest: an async test method awaits the
/// proxy, and the findings are asserted like any other values.
final class ReconnectXCTests: XCTestCase {
    func testAFixedRetryDelayIsCaught() async throws {
        // Every connection closed with 4009 'terminated' 100 ms after it opens; the traffic
        // checked against the backoff the client promises (the spec file beside this package).
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("jittered-backoff.json").path
        let proxy = try await RecordingProxy.start(upstream: .simulatedServer,
                                                   faults: [.close(code: 4009, after: .milliseconds(100), reason: "terminated")],
                                                   spec: spec)
        let client = try XCTUnwrap(ReconnectingClient(url: proxy.url + "/app/sim-key?protocol=7", retryDelay: 0.05))
        XCTAssertEqual(client.run(connections: 10), 10)

        let recording = await proxy.stop()
        XCTAssertEqual(recording.problems, [])
        let jitter = try XCTUnwrap(recording.findings.first { $0.rule == "backoff.jitter" }, "\(recording.findings)")
        XCTAssertEqual(jitter.severity, .warning)
        XCTAssertEqual(jitter.client, "client-1")
    }
}
