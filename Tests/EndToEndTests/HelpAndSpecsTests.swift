import Foundation
import Glibc
import JSON
import Lifecycle
import Testing
import TestSupport

/// Built-in help a QA engineer can act on (issue 18 items 13-15): `faultline specs`,
/// `analyze --explain`, EXAMPLES in every help, required options, "did you mean", one
/// duration syntax, the control API's address and token hints, no help citing files users
/// do not have.
@Suite struct HelpAndSpecsTests {
    static let commandPaths = ["", "proxy", "analyze", "replay", "frames", "specs", "ctl", "cert", "export", "synth", "demo",
                               "sim", "sim server", "sim client"]

    @Test func specsListsShowsAndExplainsRules() throws {
        let list = try runFaultline(["specs"])
        #expect(list.status == 0)
        for name in SpecLoader.builtInNames { #expect(list.stdout.contains("\n\(name) ") || list.stdout.hasPrefix("\(name) ")) }
        let show = try runFaultline(["specs", "show", "agora-rtm"])
        #expect(show.status == 0)
        let parsed = try SpecLoader.parse(Array(show.stdout.utf8), file: "shown")
        #expect(parsed.name == "agora-rtm")
        let rules = try runFaultline(["specs", "rules"])
        let lines = rules.stdout.split(separator: "\n")
        #expect(lines.count == RuleRegistry.ids.count)
        for id in RuleRegistry.ids {
            let line = try #require(lines.first { $0.hasPrefix(id + " ") }, "no line for \(id)")
            let severity = try #require(RuleRegistry.type(for: id)).severity.rawValue
            #expect(line.contains("  \(severity)"))
        }
        let bird = try runFaultline(["specs", "rules", "bird"])
        #expect(bird.stdout.split(separator: "\n").count == (try SpecLoader.load("bird")).rules.count)
        let typo = try runFaultline(["specs", "show", "brid"])
        #expect(typo.status == 2 && typo.stderr.contains("did you mean 'bird'?"))
    }

    @Test func explainCoversEveryRuleAndDocsListThemAll() throws {
        let docs = try String(contentsOfFile: TestEnvironment.path("docs/rules.md"), encoding: .utf8)
        for id in RuleRegistry.ids {
            #expect(RuleGuide.entry(id) != nil, "RuleGuide lacks \(id)")
            #expect(docs.contains("| `\(id)` |"), "docs/rules.md lacks \(id)")
        }
        let explained = try runFaultline(["analyze", "--explain", "channels.resubscribe"])
        #expect(explained.status == 0)
        #expect(explained.stdout.hasPrefix("channels.resubscribe  error"))
        #expect(explained.stdout.contains("Violated when: ") && explained.stdout.contains("Example: "))
        let checkedBy = explained.stdout.split(separator: "\n").first { $0.hasPrefix("Checked by the built-in specs: ") }
        let specs = Set((checkedBy?.dropFirst("Checked by the built-in specs: ".count) ?? "").split(separator: ", ").map(String.init))
        #expect(specs == ["bird", "pusher", "agora-rtm", "agora-rtm-stream", "socketio", "graphql-ws", "phoenix"], "\(checkedBy ?? "no 'Checked by' line")")
        let typo = try runFaultline(["analyze", "--explain", "backoff.bond"])
        #expect(typo.status == 2 && typo.stderr.contains("did you mean 'backoff.bound'?"))
        #expect(try runFaultline(["analyze"]).stderr.contains("missing argument <input>"))
    }

    @Test func everyHelpHasExamplesAndCitesNoFileUsersLack() throws {
        for path in Self.commandPaths {
            let words = ["help"] + path.split(separator: " ").map(String.init)
            let help = try runFaultline(words)
            #expect(help.status == 0, "\(words)")
            #expect(help.stdout.contains("EXAMPLES:\n  faultline"), "'faultline \(words.joined(separator: " "))' has no EXAMPLES")
            for missing in ["lifecycle-rules.md", "bird-protocol.md", "seeds/", "design.md", "spec/"] {
                #expect(!help.stdout.contains(missing), "'faultline \(words.joined(separator: " "))' cites \(missing)")
            }
        }
        let proxy = try runFaultline(["help", "proxy"]).stdout
        // --upstream is not needed with --forward or --route: not marked required.
        #expect(proxy.contains("USAGE: faultline proxy --listen <host:port> [--upstream <url>] [--upstream-ca"))
        #expect(proxy.components(separatedBy: "(required)").count - 1 == 1)
        #expect(try runFaultline(["help", "sim", "client"]).stdout.contains("USAGE: faultline sim client --url <url> ["))
    }

    @Test func didYouMeanForSubcommandsAndFaultRuleParts() throws {
        let command = try runFaultline(["anlyze", "x.jsonl"])
        #expect(command.status == 2 && command.stderr.contains("unknown subcommand 'anlyze' (did you mean 'analyze'?)"))
        let sub = try runFaultline(["sim", "sever"])
        #expect(sub.status == 2 && sub.stderr.contains("did you mean 'server'?"))
        let kind = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--fault", "stall-pong"])
        #expect(kind.status == 2 && kind.stderr.contains("(did you mean 'stall-pongs'?)"))
        let option = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--fault", "drop,afte=3s"])
        #expect(option.status == 2 && option.stderr.contains("(did you mean 'after='?)"))
        #expect(try runFaultline(["anything-else"]).stderr.contains("did you mean") == false)
    }

    @Test func analyzeDurationsTakeSecondsOrAUnitAlike() throws {
        let capture = TestEnvironment.path("Captures/backoff-bound.jsonl")
        let plain = try runFaultline(["analyze", capture, "--base", "0.2", "--cap", "0.4", "--format", "json"])
        let units = try runFaultline(["analyze", capture, "--base", "200ms", "--cap", "0.4s", "--format", "json"])
        #expect(plain.status == 1 && units.status == 1)
        #expect(plain.stdout == units.stdout)
        // replay reads its durations the same way: a bare number is seconds.
        let replayPlain = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:9", "--patience", "1", "--max-gap", "0.5"])
        let replayBad = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:9", "--patience", "soon"])
        #expect(replayPlain.status != 2 || !replayPlain.stderr.contains("--patience"), "\(replayPlain.stderr)")
        #expect(replayBad.status == 2 && replayBad.stderr.contains("--patience"))
        let bad = try runFaultline(["analyze", capture, "--tolerance", "soon"])
        #expect(bad.status == 2 && bad.stderr.contains("--tolerance") && bad.stderr.contains("250ms"))
    }

    @Test func ctlTakesTheURLTheProxyPrintsAndNamesTheTokenOn401() throws {
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                "--control", "127.0.0.1:0", "--control-token", "s3cret"])
        defer { proxy.stop() }
        let line = try #require(proxy.waitForLine(timeout: 60) { $0.hasPrefix("control API on http://") }, "\(proxy.output) \(proxy.errorOutput)")
        let url = String(line.dropFirst("control API on ".count))
        let denied = try runFaultline(["ctl", "--control", url, "health"])
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("401") && denied.stderr.contains("--token") && denied.stderr.contains("FAULTLINE_CONTROL_TOKEN"),
                "\(denied.stderr)")
        let allowed = try runFaultline(["ctl", "--control", url + "/", "--token", "s3cret", "health"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let https = try runFaultline(["ctl", "--control", url.replacingOccurrences(of: "http://", with: "https://"), "health"])
        #expect(https.status == 2 && https.stderr.contains("plain HTTP"))
        proxy.signal(SIGINT)
        _ = proxy.waitForExit(timeout: 30)
    }
}
