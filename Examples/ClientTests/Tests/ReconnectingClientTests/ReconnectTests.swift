import FaultlineKit
import Foundation
import ReconnectingClient
import Testing

@Test func aFixedRetryDelayIsCaught() throws {
    // A recording proxy on an ephemeral port, in front of Faultline's simulated server;
    // every connection is closed with 1011 (server error) 100 ms after it opens.
    let capture = FileManager.default.temporaryDirectory
        .appendingPathComponent("reconnect-\(UUID().uuidString).jsonl").path
    let proxy = try RecordingProxy.start(upstream: .simulatedServer,
                                         faults: ["close:1011,after=100ms"],
                                         recordingTo: capture)

    // The client under test, through the proxy: ten connections, each ended by the fault.
    let client = try #require(ReconnectingClient(url: proxy.url + "/app/sim-key?protocol=7", retryDelay: 0.05))
    #expect(client.run(connections: 10) == 10)

    // The recording, analyzed against the backoff the client promises (a spec file beside
    // this package): reconnecting after a fixed 50 ms every time is no jitter.
    let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("jittered-backoff.json").path
    let findings = try proxy.stop().findings(spec: spec)
    #expect(findings.contains { $0.rule == "backoff.jitter" }, "findings: \(findings)")
    try? FileManager.default.removeItem(atPath: capture)
}
