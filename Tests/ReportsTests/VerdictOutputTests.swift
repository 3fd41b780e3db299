import Testing
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Capture
import JSON
import Lifecycle
@testable import Reports

/// Undetermined checks, unchecked rules and `--fail-on` in every renderer (issue 17 item 10,
/// issue 18 items 9 and 10).
@Suite struct VerdictOutputTests {
    let pongTimeout = 1.0

    func report(failOn: FailOn = .error, secret: String? = nil) throws -> AnalysisReport {
        try Session.undeterminedAndWarning().report(end: 8, secret: secret, failOn: failOn, pongTimeout: pongTimeout)
    }

    @Test func theSessionHasOneWarningAndOneUndeterminedCheck() throws {
        let r = try report()
        #expect(r.findings.map(\.rule) == ["server.pong-missing"])
        #expect(r.undetermined.map(\.rule) == ["channels.resubscribe"])
        #expect(r.clients[0].undetermined.count == 1 && r.clients[1].undetermined.isEmpty)
        #expect(r.summaryLine == "2 clients, 3 connections: 0 errors, 1 warning, 1 undetermined")
    }

    @Test func failOnDecidesTheExitStatus() throws {
        #expect(try report(failOn: .error).exitStatus == 0)
        #expect(try report(failOn: .warning).exitStatus == 1)
        #expect(try report(failOn: .never).exitStatus == 0)
        let errors = try sampleReport()
        #expect(errors.exitStatus == 1)
        var never = errors
        never.failOn = .never
        #expect(never.exitStatus == 0)
    }

    @Test func textListsUndeterminedAndUncheckedApart() throws {
        let text = TextReport.render(try report())
        #expect(text.contains("undetermined (the capture ended before these checks could be decided; not a pass):"))
        #expect(text.contains("    error   channels.resubscribe  conn 3 from 3.710 s to 13.710 s: private-chat not subscribed again yet"))
        #expect(text.contains("  error   channels.resubscribe (undetermined)  ×1  client-1\n"))
        #expect(text.contains("? channels.resubscribe undetermined"))
        #expect(text.contains("not checked:\n  channels.auth-signature: needs --app-secret"))
        #expect(!TextReport.render(try report(secret: "s")).contains("not checked:"))
    }

    @Test func jsonCarriesUndeterminedNotCheckedAndFailOn() throws {
        let json = try JSONParser.parse(JSONReport.render(try report(failOn: .warning)))
        let open = try #require(json["undetermined"]?.arrayValue)
        #expect(open.count == 1)
        #expect(open.first?["rule"]?.stringValue == "channels.resubscribe")
        #expect(open.first?["client"]?.stringValue == "client-1")
        #expect(open.first?["deadline"]?.doubleValue == 13.71)
        #expect(json["not_checked"]?.arrayValue?.first?["rule"]?.stringValue == "channels.auth-signature")
        #expect(json["summary"]?["undetermined"]?.intValue == 1)
        #expect(json["summary"]?["fail_on"]?.stringValue == "warning")
        #expect(json["summary"]?["exit_status"]?.intValue == 1)
    }

    @Test func htmlListsUndeterminedChecks() throws {
        let html = HTMLReport.render(try report())
        #expect(html.contains("id=\"undetermined\""))
        #expect(html.contains("private-chat not subscribed again yet"))
    }

    @Test func junitSkipsUncheckedAndUndeterminedAndFailsWarningsOnlyOnRequest() throws {
        let byDefault = try JUnitCases(JUnitReport.render(try report()))
        #expect(byDefault.failures.isEmpty)
        #expect(byDefault.skipped["client-1/channels.auth-signature"]?.hasPrefix("not checked: needs --app-secret") == true)
        #expect(byDefault.skipped["client-2/channels.auth-signature"] != nil)
        #expect(byDefault.skipped["client-1/channels.resubscribe"]?.hasPrefix("undetermined: private-chat") == true)
        #expect(byDefault.skipped["client-2/channels.resubscribe"] == nil)
        #expect(byDefault.output["client-2/server.pong-missing"]?.contains("warning (does not fail under --fail-on error)") == true)
        #expect(byDefault.suites["client-1"]?["skipped"] == "2")
        #expect(byDefault.root["failures"] == "0")

        // With the secret the signature rule is checked (and the fixture's made-up auth fails it).
        let strict = try JUnitCases(JUnitReport.render(try report(failOn: .warning, secret: "s")))
        #expect(strict.failures == ["client-1/channels.auth-signature", "client-2/server.pong-missing"])
        #expect(strict.skipped["client-1/channels.auth-signature"] == nil)
        #expect(strict.root["failures"] == "2")
    }

    @Test func junitFollowsTheSchemaJenkinsAndGitLabRead() throws {
        var withStart = try Session.undeterminedAndWarning().report(end: 8, pongTimeout: pongTimeout,
                                                                    startedAt: 1_764_455_426_983_000)
        withStart.failOn = .warning
        for xml in [JUnitReport.render(try sampleReport()), JUnitReport.render(withStart)] {
            let cases = try JUnitCases(xml)
            #expect(cases.problems.isEmpty, "\(cases.problems)")
            #expect(cases.suites.count == cases.suites.keys.count)
        }
        let cases = try JUnitCases(JUnitReport.render(withStart))
        #expect(cases.suites["client-1"]?["timestamp"] == "2025-11-29T22:30:26")
        #expect(cases.suites["client-2"]?["time"] == "7.500")
        #expect(cases.root["time"] == "8.000")
    }
}

/// Reads JUnit XML and checks it against the rules of the junit-10 schema that Jenkins's
/// xUnit plugin validates with (and GitLab's parser accepts): which elements may appear
/// where, which attributes each may carry, which are required, and the time format.
final class JUnitCases: NSObject, XMLParserDelegate {
    var root: [String: String] = [:]
    var suites: [String: [String: String]] = [:]
    var failures: [String] = []
    var skipped: [String: String] = [:]
    var output: [String: String] = [:]
    var problems: [String] = []
    private var stack: [String] = []
    private var currentCase = ""
    private var text = ""

    static let allowed: [String: (parents: Set<String>, attributes: Set<String>, required: Set<String>)] = [
        "testsuites": ([""], ["name", "time", "tests", "failures", "errors"], []),
        "testsuite": (["testsuites", "testsuite", ""], ["name", "tests", "failures", "errors", "group", "time", "skipped",
                                                        "timestamp", "hostname", "id", "package", "file", "log", "url"],
                      ["name", "tests", "failures", "errors"]),
        "properties": (["testsuite"], [], []),
        "property": (["properties"], ["name", "value"], ["name", "value"]),
        "testcase": (["testsuite"], ["name", "time", "classname", "group"], ["name"]),
        "failure": (["testcase"], ["type", "message"], []),
        "error": (["testcase"], ["type", "message"], []),
        "skipped": (["testcase"], ["type", "message"], []),
        "system-out": (["testcase", "testsuite"], [], []),
        "system-err": (["testcase", "testsuite"], [], []),
    ]

    init(_ xml: String) throws {
        super.init()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = self
        guard parser.parse() else { throw XMLError(message: "\(parser.parserError.map(String.init(describing:)) ?? "parse error")") }
    }

    struct XMLError: Error { var message: String }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let parent = stack.last ?? ""
        if let rule = Self.allowed[name] {
            if !rule.parents.contains(parent) { problems.append("<\(name)> inside <\(parent)>") }
            for key in attributes.keys where !rule.attributes.contains(key) { problems.append("<\(name)> has attribute \(key)") }
            for key in rule.required where attributes[key] == nil { problems.append("<\(name)> lacks \(key)") }
        } else {
            problems.append("unknown element <\(name)>")
        }
        // SUREFIRE_TIME: digits (optionally grouped by commas) and an optional fraction.
        if let time = attributes["time"], name != "testcase",
           time.range(of: #"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$"#, options: .regularExpression) == nil {
            problems.append("<\(name)> time \(time)")
        }
        stack.append(name)
        text = ""
        switch name {
        case "testsuites": root = attributes
        case "testsuite": suites[attributes["name"] ?? ""] = attributes
        case "testcase": currentCase = "\(attributes["classname"] ?? "")/\(attributes["name"] ?? "")"
        case "failure": failures.append(currentCase)
        case "skipped": skipped[currentCase] = attributes["message"] ?? ""
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "system-out", stack.dropLast().last == "testcase" { output[currentCase] = text }
        stack.removeLast()
    }
}
