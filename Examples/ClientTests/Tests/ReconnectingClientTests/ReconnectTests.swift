import FaultlineKit
import Foundation
import ReconnectingClient
import Testing

@Test func aFixedRetryDelayIsCaught() async throws {
    // A recording proxy on an ephemeral port, in front of Faultline's simulated server;
    // every connection is closed with 1011 (server error) 100 ms after it opens. The
    // traffic is checked as it passes against the backoff the client promises: a spec file
    // beside this package (the built-in `websocket` spec assumes no reconnect policy).
    let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("jittered-backoff.json").path
    let proxy = try await RecordingProxy.start(upstream: .simulatedServer,
                                               faults: [.close(code: 1011, after: .milliseconds(100))],
                                               spec: spec)

    // The client under test, through the proxy: ten connections, each ended by the fault.
    let client = try #require(ReconnectingClient(url: proxy.url + "/app/sim-key?protocol=7", retryDelay: 0.05))
    #expect(client.run(connections: 10) == 10)

    // The findings, in memory: reconnecting after a fixed 50 ms every time is no jitter.
    let recording = await proxy.stop()
    let jitter = try #require(recording.findings.first { $0.rule == "backoff.jitter" }, "\(recording.findings)")
    #expect(jitter.severity == .warning)
    #expect(recording.problems.isEmpty, "\(recording.problems)")
}
