import Capture
import Foundation
import Glibc
import Testing
import TestSupport

/// A realtime app behind `faultline proxy --forward` with TLS interception: its channel-auth
/// HTTP request and its wss:// connection, from the Python client and from headless
/// Chromium trusting the CA through an NSS database; recorded, hit by a fault, analyzed.
@Suite("Forward proxy with an app", .serialized)
struct ForwardAppTests {
    /// forward_app.py's HTTPS and wss:// servers with a certificate from `faultline cert`.
    final class App {
        let process: ChildProcess
        let httpPort: Int
        let wsPort: Int

        init(_ certificates: CertDirectory) throws {
            process = try ChildProcess.python(TestEnvironment.path("Tests/Peers/forward_app.py"),
                                              ["server", "--cert", certificates.certificate, "--key", certificates.key])
            let ready = try #require(process.waitForLine(timeout: 20) { $0.hasPrefix("READY ") },
                                     "forward_app.py did not start: \(process.errorOutput.joined(separator: "\n"))")
            wsPort = try #require(Int(ready.dropFirst(6)))
            httpPort = try #require(process.output.first { $0.hasPrefix("HTTP ") }.flatMap { Int($0.dropFirst(5)) })
        }

        deinit { process.stop() }
    }

    @Test("the channel-auth request is relayed and recorded as http, and analyze shows it beside the subscribe")
    func authBesideSubscribe() throws {
        let upstream = try CertDirectory(label: "faultline-forward-upstream")
        let interception = try CertDirectory(label: "faultline-forward-ca")
        let app = try App(upstream)
        let rig = try ForwardRig(["--tls-ca", interception.ca, "--tls-ca-key", interception.path + "/ca-key.pem",
                                  "--upstream-ca", upstream.ca])
        let lines = try peerLines([TestEnvironment.path("Tests/Peers/forward_app.py"), "client",
                                   "https://localhost:\(app.httpPort)", "wss://localhost:\(app.wsPort)",
                                   "--proxy", rig.proxyURL, "--ca", interception.ca])
        #expect(lines.received.compactMap(Bird.name) == ["bird:connection_established", "bird_internal:subscription_succeeded"],
                "\(lines)")
        let auth = try #require(lines.of(kind: "auth").first?["auth"]?.stringValue)

        let capture = try rig.stop()
        let exchange = try #require(capture.exchanges.first, "\(capture.records)")
        #expect(exchange.method == "POST" && exchange.url == "https://localhost:\(app.httpPort)/auth")
        #expect(exchange.requestText == "socket_id=1.2&channel_name=private-orders")
        #expect(exchange.status == 200 && exchange.responseText?.contains(auth) == true)
        #expect(exchange.requestLength == 41)

        let report = try runFaultline(["analyze", rig.capturePath])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("auth request POST https://localhost:\(app.httpPort)/auth -> 200 "
                                       + "(its signature used by the subscribe to private-orders on conn 2"), "\(report.stdout)")
        // The HTML report puts it on the client's lane.
        let html = try runFaultline(["analyze", rig.capturePath, "--format", "html"])
        #expect(html.stdout.contains("<title>auth request POST https://localhost:\(app.httpPort)/auth -> 200 at "), "\(html.stdout)")
    }

    @Test("headless Chromium through the proxy, trusting the CA via NSS: page, auth, wss://, a fault, analyze")
    func chromium() throws {
        let upstream = try CertDirectory(label: "faultline-forward-upstream")
        let interception = try CertDirectory(label: "faultline-forward-ca")
        let app = try App(upstream)
        let rig = try ForwardRig(["--tls-ca", interception.ca, "--tls-ca-key", interception.path + "/ca-key.pem",
                                  "--upstream-ca", upstream.ca,
                                  "--fault", "close:4009,on=bird_internal:subscription_succeeded,reason=terminated"])
        // The browser's own profile: an NSS database in $HOME/.pki/nssdb trusting the CA.
        let home = rig.directory.appendingPathComponent("home").path
        let nss = "sql:\(home)/.pki/nssdb"
        try FileManager.default.createDirectory(atPath: home + "/.pki/nssdb", withIntermediateDirectories: true)
        let created = try runCommand("/usr/bin/certutil", ["-d", nss, "-N", "--empty-password"])
        #expect(created.status == 0, "\(created.stderr)")
        let trusted = try runCommand("/usr/bin/certutil", ["-d", nss, "-A", "-t", "C,,", "-n", "faultline", "-i", interception.ca])
        #expect(trusted.status == 0, "\(trusted.stderr)")

        let browser = try ChildProcess("/usr/bin/chromium", Self.chromiumFlags(home: home, proxy: rig.proxyURL)
                                       + ["https://localhost:\(app.httpPort)/"], environment: ["HOME": home])
        let done = app.process.waitForLine(timeout: 90) { $0.hasPrefix("DONE ") }
        browser.signal(SIGTERM)
        if browser.waitForExit(timeout: 10) == nil { browser.stop() }
        #expect(done == "DONE bird:connection_established,bird_internal:subscription_succeeded close 4009",
                "browser stderr: \(browser.errorOutput.suffix(20))")

        let capture = try rig.stop()
        // Loopback only: everything the browser asked for went to the app.
        let hosts: [String] = capture.exchanges.map { String($0.url.split(separator: "/")[1]) }
        let targets = Set(hosts + capture.opens.compactMap(\.upstream) + capture.tunnels.map(\.target))
        #expect(targets.allSatisfy { $0.hasPrefix("localhost:") || $0.hasPrefix("wss://localhost:") }, "\(targets)")
        #expect(capture.exchanges.contains { $0.method == "GET" && $0.url == "https://localhost:\(app.httpPort)/" && $0.status == 200 })
        #expect(capture.faults.first?.rule == "close:4009,on=bird_internal:subscription_succeeded,reason=terminated")
        let agent = capture.upgrades.first { $0.from == .client }?.header("User-Agent") ?? ""
        #expect(agent.contains("Chrome"), "the WebSocket came from the browser: \(agent)")

        let report = try runFaultline(["analyze", rig.capturePath])
        #expect(report.status == 0 || report.status == 1, "analyze read the capture: \(report.stderr)")
        #expect(report.stdout.contains("fault injected: close:4009"), "\(report.stdout)")
        #expect(report.stdout.contains("auth request POST https://localhost:\(app.httpPort)/auth -> 200"), "\(report.stdout)")
    }

    /// Headless Chromium pointed at the proxy, loopback included (it bypasses proxies for
    /// localhost unless told `<-loopback>`), with its background traffic off: what it still
    /// sends to Google's hosts bypasses the proxy and dies at its own resolver (`~NOTFOUND`),
    /// so nothing leaves loopback.
    static func chromiumFlags(home: String, proxy: String) -> [String] {
        ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--user-data-dir=\(home)/profile", "--proxy-server=\(proxy)",
         "--proxy-bypass-list=<-loopback>;*.google.com;*.googleapis.com;*.gvt1.com;*.gstatic.com",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
         "--disable-client-side-phishing-detection", "--disable-breakpad", "--metrics-recording-only",
         "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,SpellCheck"]
    }
}

/// docs/forward-proxy.md gives the commands these tests run.
@Suite struct ForwardGuideTests {
    @Test func theGuideShowsTheCommandsTheTestsRun() throws {
        let guide = try String(contentsOfFile: TestEnvironment.path("docs/forward-proxy.md"), encoding: .utf8)
        for command in [
            "faultline proxy --forward --listen 127.0.0.1:8080 \\\n    --tls-ca certs/ca.pem --tls-ca-key certs/ca-key.pem",
            "certutil -d sql:$HOME/.pki/nssdb -N --empty-password",
            "certutil -d sql:$HOME/.pki/nssdb -A -t \"C,,\" -n faultline -i certs/ca.pem",
            "chromium --proxy-server=http://127.0.0.1:8080 --proxy-bypass-list='<-loopback>'",
            "curl -x http://127.0.0.1:8080 --cacert certs/ca.pem",
            "faultline ctl add 'close:4009,on=bird_internal:subscription_succeeded,reason=terminated'",
        ] {
            #expect(guide.contains(command), "the guide lost: \(command)")
        }
        // The same flags as the Chromium test's, the bypass list's head included.
        let flags = ForwardAppTests.chromiumFlags(home: "/h", proxy: "http://127.0.0.1:8080")
        #expect(flags.contains("--proxy-server=http://127.0.0.1:8080"))
        #expect(flags.contains { $0.hasPrefix("--proxy-bypass-list=<-loopback>") })
    }
}
