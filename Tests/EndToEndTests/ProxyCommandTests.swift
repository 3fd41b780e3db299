import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// `faultline proxy` as a command: unusable flags refused before anything starts, the live
/// view, fault plans, and the connection limit.
@Suite(.serialized) struct ProxyCommandTests {
    static let upstream = ["--upstream", "ws://127.0.0.1:9"]

    /// Runs the proxy with arguments that must be refused: exit 2, one message naming `expected`.
    func refused(_ arguments: [String], _ expected: String...) throws -> String {
        let run = try runFaultline(["proxy"] + arguments, timeout: 20)
        #expect(run.status == 2, "arguments \(arguments) gave \(String(describing: run.status)): \(run.stderr)")
        #expect(run.stdout.isEmpty, "nothing may start: \(run.stdout)")
        for part in expected { #expect(run.stderr.contains(part), "'\(part)' not in: \(run.stderr)") }
        return run.stderr
    }

    @Test func badAddressesAreRefused() throws {
        _ = try refused(["--listen", "127.0.0.1"] + Self.upstream, "--listen", "has no port")
        _ = try refused(["--listen", "127.0.0.1:70000"] + Self.upstream, "--listen", "70000")
        _ = try refused(["--listen", "::1:80"] + Self.upstream, "brackets")
        _ = try refused(["--listen", "127.0.0.1:0", "--upstream", "http://example.com"], "--upstream", "ws://")
        _ = try refused(["--listen", "127.0.0.1:0", "--upstream", "ws://:80"], "--upstream", "no host")
        _ = try refused(["--listen", "127.0.0.1:0"], "--upstream")
        _ = try refused(Self.upstream, "--listen")
        _ = try refused(["--listen", "not-an-ip:0"] + Self.upstream, "listen on not-an-ip:0")
    }

    @Test func aBadFaultRuleIsShownWithACaretUnderTheBadPart() throws {
        let message = try refused(["--listen", "127.0.0.1:0", "--fault", "stall-pongs", "--fault", "close:99999,after=5s"]
                                  + Self.upstream, "close code 99999")
        let lines = message.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.dropFirst().first == "  close:99999,after=5s")
        #expect(lines.last == "        ^^^^^")
        _ = try refused(["--listen", "127.0.0.1:0", "--fault", "explode"] + Self.upstream, "unknown fault kind 'explode'")
        _ = try refused(["--listen", "127.0.0.1:0", "--fault", "close:1006"] + Self.upstream, "1006")
    }

    @Test func aBadFaultPlanNamesTheFileAndLine() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-plan")
        let plan = directory.appendingPathComponent("scenario.faults").path
        try "# a QA scenario\nstall-pongs,conn=2\n\nlatency:fast\n".write(toFile: plan, atomically: true, encoding: .utf8)
        _ = try refused(["--listen", "127.0.0.1:0", "--faults", plan] + Self.upstream, "\(plan):4:9:", "latency:fast")
        _ = try refused(["--listen", "127.0.0.1:0", "--faults", directory.appendingPathComponent("missing").path]
                        + Self.upstream, "missing: cannot read")
    }

    @Test func badLimitsAndUnbuiltFeaturesAreRefused() throws {
        let base = ["--listen", "127.0.0.1:0"] + Self.upstream
        _ = try refused(base + ["--max-connections", "0"], "--max-connections")
        _ = try refused(base + ["--max-payload", "lots"], "--max-payload")
        _ = try refused(base + ["--seed", "-1"], "--seed")
        _ = try refused(base + ["--spec", "/nonexistent/spec.json"], "--spec", "/nonexistent/spec.json")
        // --control and its flags are checked by the control API's own tests (branch `control`).
        _ = try refused(base + ["--record", "/nonexistent-dir/capture.jsonl"], "/nonexistent-dir/capture.jsonl")
    }

    /// Issue 17 item 3: an existing capture is never replaced silently; `--overwrite` replaces
    /// it, and a device such as /dev/null is not a capture to protect.
    @Test func anExistingCaptureIsNotOverwritten() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-overwrite")
        let path = directory.appendingPathComponent("session.jsonl").path
        try "precious\n".write(toFile: path, atomically: true, encoding: .utf8)
        let base = ["--listen", "127.0.0.1:0"] + Self.upstream
        _ = try refused(base + ["--record", path], path, "exists", "--overwrite")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious\n", "the file must be left alone")

        for record in [[path, "--overwrite"], ["/dev/null"]] {
            let proxy = try ChildProcess.faultline(["proxy"] + base + ["--record"] + record)
            defer { proxy.stop() }
            #expect(proxy.waitForLine(timeout: 30) { $0.hasPrefix("listening on") } != nil,
                     "\(record): \(proxy.errorOutput)")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("{\"type\":\"header\""))
    }

    @Test func aPortInUseIsRefused() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], record: false)
        _ = try refused(["--listen", "127.0.0.1:\(rig.proxyPort)"] + Self.upstream, "address already in use")
    }

    @Test func aFaultPlanFileDrivesTheProxy() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-plan")
        let plan = directory.appendingPathComponent("scenario.faults").path
        try "# terminate the member\nclose:4009,after=200ms,reason=from plan # trailing comment\n"
            .write(toFile: plan, atomically: true, encoding: .utf8)
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--faults", plan])
        let client = try rig.client(["--mode", "bird", "--wait", "10"])
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["code"]?.intValue == 4009 && closed["reason"]?.stringValue == "from plan")
        let capture = try rig.stopProxy()
        #expect(capture.header.settings["faults"] == .array([.string("close:4009,after=200ms,reason=from plan")]))
        #expect(capture.faults.map(\.kind) == ["close"])
    }

    @Test func liveViewPrintsTheLifecycleAndIsQuietOtherwise() throws {
        let subscribe = Bird.event("bird:subscribe", data: #"{"channel":"orders"}"#)
        let rule = "close:4009,reason=terminated,after=600ms"
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--live", "--fault", rule])
        _ = try rig.client(["--mode", "bird", "--send", subscribe, "--wait", "10"])
        _ = try rig.stopProxy()
        let live = rig.proxy.errorOutput
        let expected = [
            "conn 1 open from 127.0.0.1:",
            "conn 1 upgraded (101)",
            "conn 1 handshake socket_id=123.456 activity_timeout=120",
            "conn 1 client bird:subscribe orders",
            "conn 1 subscribed orders",
            "conn 1 fault \(rule): ",
            "conn 1 close 4009 'terminated' from server (injected by \(rule))",
        ]
        var remaining = live[...]
        for part in expected {
            guard let index = remaining.firstIndex(where: { $0.contains(part) }) else {
                Issue.record("'\(part)' missing or out of order in:\n\(live.joined(separator: "\n"))")
                break
            }
            #expect(remaining[index].hasPrefix("+"), "lines start with the time: \(remaining[index])")
            remaining = remaining[(index + 1)...]
        }
        // Without --live the proxy says nothing on stderr.
        let quiet = try ProxyRig(server: ["--mode", "bird"], proxy: ["--fault", rule])
        _ = try quiet.client(["--mode", "bird", "--send", subscribe, "--wait", "10"])
        _ = try quiet.stopProxy()
        #expect(quiet.proxy.errorOutput.isEmpty, "\(quiet.proxy.errorOutput)")
    }

    @Test func aFrameOverMaxPayloadEndsTheConnectionWith1009() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--max-payload", "1K"])
        let big = String(repeating: "x", count: 2000)
        let client = try rig.client(["--mode", "bird", "--delay", "0.2", "--send", big, "--wait", "10"])
        let closed = try #require(client.of(kind: "closed").first, "client: \(client)")
        #expect(closed["code"]?.intValue == 1009)
        let capture = try rig.stopProxy()
        #expect(capture.header.settings["max_payload"]?.intValue == 1024)
        let close = try #require(capture.frames.first { $0.opcode == .close })
        #expect(close.from == .server && close.action == .injected && close.closeCode == 1009)
        #expect(!capture.frames.contains { $0.opcode == .text && $0.from == .client }, "the big frame was never relayed")
        #expect(rig.server.output.map(PeerLine.init).received.isEmpty)
    }

    @Test func connectionsOverTheLimitGet503() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--max-connections", "1"])
        let first = try ChildProcess.python(ProxyRig.peers, ["client", rig.url + "/a", "--mode", "bird", "--wait", "60"])
        defer { first.stop() }
        #expect(first.waitForLine(timeout: 20) { $0.contains("connection_established") } != nil)
        let second = try rig.client(path: "/b", ["--mode", "bird", "--wait", "2"])
        let refused = try #require(second.of(kind: "refused").first, "second client: \(second)")
        #expect(refused["status"]?.intValue == 503)
        #expect(refused["body"]?.stringValue?.contains("too many connections") == true)
        first.stop()
        let capture = try rig.stopProxy()
        #expect(capture.opens.count == 1)
        #expect(capture.records.contains {
            if case .note(let note) = $0 { note.message.contains("limit of 1 connections") } else { false }
        })
    }
}
