import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// `faultline ctl intercept` against a running `faultline proxy --control`: a Python
/// `websockets` client sends `tick N` through the proxy to an echo server; ctl pauses the
/// connection's server messages, lists what is held, drops one echo and edits the next, and
/// the client receives the edit and never the dropped one; the capture records both. Then
/// the pause ends, and the refusals: each names the flag, argument or message at fault.
@Suite(.serialized) struct CtlInterceptTests {
    func ctl(_ address: String, _ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        try runFaultline(["ctl", "--control", address] + arguments, timeout: 30)
    }

    /// The held messages `ctl --json intercept list` reports, once there are at least
    /// `count` (re-asked as the echoes come back, up to 30 s).
    func held(_ address: String, atLeast count: Int) throws -> [JSONValue] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let listed = try ctl(address, ["--json", "intercept", "list"])
            let held = (try? JSONParser.parse(listed.stdout))?["held"]?.arrayValue ?? []
            if held.count >= count || Date() >= deadline { return held }
            usleep(200_000)   // the next echo is 0.3 s away
        }
    }

    @Test func holdListDropEditAndResumeFromTheCommandLine() throws {
        let dir = TestEnvironment.temporaryDirectory("ctl-intercept")
        let capture = dir.appendingPathComponent("session.jsonl").path
        let server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/ws_echo_server.py"))
        defer { server.stop() }
        let port = try #require(server.waitForLine { $0.hasPrefix("READY ") }).dropFirst("READY ".count)
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(port)",
                                                "--record", capture, "--control", "127.0.0.1:0"])
        defer { proxy.stop() }
        let proxyAddress = try #require(proxy.waitForLine { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        let control = String(try #require(proxy.waitForLine { $0.hasPrefix("control API on http://") }).dropFirst("control API on http://".count))
        let edited = "edited by ctl"
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/ws_ticker.py"),
                                             ["ws://\(proxyAddress)/echo", "--until", edited, "--interval", "0.3"])
        defer { client.stop() }
        try #require(client.waitForLine { $0 == "CONNECTED" } != nil, "client: \(client.errorOutput.suffix(5))")

        let on = try ctl(control, ["intercept", "on", "1", "--from", "server", "--hold-timeout", "30s"])
        #expect(on.status == 0, "\(on.stderr)")
        #expect(on.stdout == "paused connection 1: holding messages from the server; each is forwarded unchanged after 30 s undecided")

        let messages = try held(control, atLeast: 2)
        try #require(messages.count >= 2, "nothing held: \(messages)")
        let (first, second) = (messages[0], messages[1])
        let dropped = try #require(first["text"]?.stringValue)
        #expect(dropped.hasPrefix("tick "))
        #expect(first["from"]?.stringValue == "server" && first["conn"]?.intValue == 1)

        let table = try ctl(control, ["intercept", "list"])
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ") == ["PAUSED", "FROM", "MATCH", "TIMEOUT"])
        #expect(lines.dropFirst().first?.split(separator: " ") == ["connection", "1", "server", "-", "30.000s"])
        let row = lines.first { $0.hasSuffix(dropped) }
        #expect(row?.split(separator: " ").prefix(4) == ["1", "\(first["id"]?.intValue ?? 0)", "server", "text"], "\(table.stdout)")

        let firstID = String(try #require(first["id"]?.intValue)), secondID = String(try #require(second["id"]?.intValue))
        let drop = try ctl(control, ["intercept", "drop", "1", firstID])
        #expect(drop.status == 0, "\(drop.stderr)")
        #expect(drop.stdout == "dropped held message \(firstID) of connection 1")
        let edit = try ctl(control, ["intercept", "edit", "1", secondID, edited])
        #expect(edit.stdout == "sent the edit of held message \(secondID) of connection 1")
        #expect(client.waitForLine(timeout: 30) { $0 == "RECV \(edited)" } != nil, "client: \(client.output.suffix(5))")
        #expect(client.waitForLine(timeout: 30) { $0 == "DONE" } != nil)
        #expect(!client.output.contains("RECV \(dropped)"), "the dropped echo reached the client")

        // A message decided already is no longer held: the API's 404, exit 1.
        let again = try ctl(control, ["intercept", "forward", "1", firstID])
        #expect(again.status == 1)
        #expect(again.stderr.contains("404 Not Found: connection 1 holds no message \(firstID)"), "\(again.stderr)")

        let off = try ctl(control, ["intercept", "off", "1"])
        #expect(off.stdout == "resumed connection 1: what was held is forwarded")
        let after = try ctl(control, ["intercept", "list"])
        #expect(after.stdout.hasPrefix("not paused\n"), "\(after.stdout)")
        proxy.stop()

        // The capture says what the operator did to each.
        let records = try String(contentsOfFile: capture, encoding: .utf8).split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let frames = records.filter { $0["type"]?.stringValue == "frame" }
        #expect(frames.contains { $0["fault"]?.stringValue == "intercept:drop" && $0["action"]?.stringValue == "dropped" && $0["text"]?.stringValue == dropped })
        #expect(frames.contains { $0["fault"]?.stringValue == "intercept:edit" && $0["action"]?.stringValue == "injected" && $0["text"]?.stringValue == edited })
    }

    /// Bad command lines are refused before anything is sent (exit 2), each naming what is
    /// wrong; no proxy needs to run for that.
    @Test func refusalsNameTheFlagOrArgument() throws {
        let address = "127.0.0.1:\(TestEnvironment.freePort())"
        let cases: [([String], String)] = [
            (["intercept"], "faultline ctl intercept: missing subcommand (expected one of: list, on, off, forward, edit, drop)"),
            (["intercept", "of"], "faultline ctl intercept: unknown subcommand 'of' (did you mean 'on'?)"),
            (["intercept", "edit", "1", "2"], "faultline ctl intercept edit: expected intercept edit CONN ID TEXT"),
            (["intercept", "off", "1", "2"], "faultline ctl intercept off: expected intercept off [CONN] (unexpected '2')"),
            (["intercept", "drop", "one", "2"], "faultline ctl intercept drop: connection id 'one' is not a positive number"),
            (["intercept", "on", "--from", "sideways"], "invalid value 'sideways' for '--from': expected one of client, server"),
            (["intercept", "on", "--hold-timeout", "2h"], "invalid value '2h' for '--hold-timeout': expected a duration of 1s to 1h"),
            (["intercept", "on", "--match", ""], "faultline ctl intercept on: --match needs the text to look for"),
            (["intercept", "list", "--from", "client"], "faultline ctl intercept list: --from is for 'intercept on'"),
            (["intercept", "edit", "1", "2", "%%", "--base64"], "faultline ctl intercept edit: --base64: '%%' is not base64"),
            (["connections", "--match", "x"], "faultline ctl connections: --match is for 'intercept on'"),
        ]
        for (arguments, message) in cases {
            let run = try ctl(address, arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
        let fleet = try runFaultline(["ctl", "--proxy", address, "--proxy", address, "intercept", "list"], timeout: 30)
        #expect(fleet.status == 2)
        #expect(fleet.stderr.contains("a held message lives on one replica: give its --control"), "\(fleet.stderr)")
    }

    /// `help ctl intercept`, `ctl intercept --help` and `-h` after ctl's own options all print
    /// intercept's own help: its subcommands with their arguments and only the options an
    /// intercept request takes, with examples; `help ctl` still prints the whole of ctl and
    /// points to it.
    @Test func interceptHasItsOwnHelp() throws {
        let help = try runFaultline(["help", "ctl", "intercept"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("OVERVIEW: Hold a running proxy's messages for a decision"), "\(help.stdout)")
        #expect(help.stdout.contains("USAGE: faultline ctl [--control <host:port>] [--token <token>] [--json] intercept <subcommand>"))
        #expect(help.stdout.contains("  edit CONN ID TEXT    send TEXT in its place"))
        let oneLine = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(oneLine.contains("<subcommand> What to do. (values: list, on, off, forward, edit, drop)"))
        for option in ["--control <host:port>", "--hold-timeout <duration>", "--from <side>", "--base64", "--json"] {
            #expect(help.stdout.contains("\n  \(option)"), "no \(option) in: \(help.stdout)")
        }
        for other in ["--proxies <file>", "connections          list open connections", "apply CONN RULE"] {
            #expect(!help.stdout.contains(other), "ctl's whole help: \(other)")
        }
        #expect(help.stdout.contains("EXAMPLES:\n  faultline ctl --control 127.0.0.1:7002 intercept on 3"))
        for words in [["ctl", "intercept", "--help"], ["ctl", "--control", "127.0.0.1:1", "intercept", "edit", "-h"]] {
            let asked = try runFaultline(words)
            #expect(asked.status == 0, "\(words)")
            #expect(asked.stdout == help.stdout, "\(words) printed another help")
        }
        let ctl = try runFaultline(["help", "ctl"])
        #expect(ctl.stdout.hasPrefix("OVERVIEW: Drive a running proxy through its control API."))
        #expect(ctl.stdout.contains("'faultline help ctl intercept'") && ctl.stdout.contains("--proxies"))
        #expect(try runFaultline(["ctl", "--help"]).stdout == ctl.stdout)
    }
}
