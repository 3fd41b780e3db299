import Foundation
import JSON
import TestSupport

/// A real headless browser running the page: a list of steps in, one JSON result a step
/// out, then what the page logged and threw. Each step waits on an event (a DOM change),
/// bounded. The steps are those of `Tests/Peers/browser_steps.py`, the same in both
/// browsers: Chromium, started per run by `cdp_driver.py` over its DevTools protocol (on a
/// pipe, so no port), and Firefox, started once per suite (`FirefoxBrowser`) and driven by
/// `bidi_driver.py` over WebDriver BiDi.
struct Browser {
    static let chromium = "/usr/bin/chromium"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: chromium) }

    enum Engine: Sendable {
        case chromium
        case firefox(FirefoxBrowser)

        /// Where a journey's screenshots go (see `Browser.screenshotDirectory`).
        func screenshotDirectory(default dir: URL) -> String { Browser.screenshotDirectory(default: dir) }
        /// Chromium's are the docs' images (`ui-live-1400.png`); Firefox's are named apart.
        var screenshotPrefix: String {
            switch self {
            case .chromium: "ui-"
            case .firefox: "ui-firefox-"
            }
        }
    }

    struct Run {
        var steps: [JSONValue]
        var console: [String]
        var exceptions: [String]
        var status: Int32?
        var stderr: String
        /// The value step `i` returned (nil when it failed or did not run).
        func value(_ i: Int) -> JSONValue? {
            i < steps.count && steps[i]["ok"]?.boolValue == true ? steps[i]["value"] : nil
        }
        var failure: String? {
            steps.first { $0["ok"]?.boolValue == false }.map { "\($0)" } ?? (status == 0 ? nil : "driver exit \(String(describing: status)): \(stderr)")
        }
    }

    /// Opens `url` and runs `steps` (see cdp_driver.py for their shapes).
    static func run(_ url: String, steps: [JSONValue], in dir: URL, name: String, engine: Engine = .chromium) throws -> Run {
        finish(try start(url, steps: steps, in: dir, name: name, engine: engine), engine: engine)
    }

    /// Starts the driver on `steps` without waiting for it, so the test can act on the
    /// session while the page runs (each step's result is a line of `output` as it ends);
    /// `finish` then reads the results.
    static func start(_ url: String, steps: [JSONValue], in dir: URL, name: String, engine: Engine = .chromium) throws -> ChildProcess {
        let stepsFile = dir.appendingPathComponent("\(name)-steps.json")
        var bytes: [UInt8] = []
        JSONWriter.write(.array(steps), into: &bytes)
        try Data(bytes).write(to: stepsFile)
        switch engine {
        case .chromium:
            return try ChildProcess.python(TestEnvironment.path("Tests/Peers/cdp_driver.py"), [
                "--url", url, "--steps", stepsFile.path, "--profile", dir.appendingPathComponent("profile-\(name)").path,
                "--chromium", chromium,
            ])
        case .firefox(let firefox):
            return try ChildProcess.python(TestEnvironment.path("Tests/Peers/bidi_driver.py"), [
                "--bidi", try firefox.address(), "--url", url, "--steps", stepsFile.path,
            ])
        }
    }

    /// Waits for a started driver to end (bounded) and reads what each step returned.
    static func finish(_ driver: ChildProcess, engine: Engine = .chromium) -> Run {
        let status = driver.waitForExit(timeout: 240)
        if status == nil {
            driver.stop()
            // A driver killed in its session leaves Firefox refusing the next one.
            if case .firefox(let firefox) = engine { firefox.restart() }
        }
        var run = Run(steps: [], console: [], exceptions: [], status: status, stderr: driver.errorOutput.joined(separator: "\n"))
        for line in driver.output {
            guard let value = try? JSONParser.parse(line) else { continue }
            if let console = value["console"]?.arrayValue {
                run.console = console.compactMap(\.stringValue)
                run.exceptions = value["exceptions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            } else {
                run.steps.append(value)
            }
        }
        return run
    }

    /// Where screenshots go: `FAULTLINE_SCREENSHOTS` (the docs' images are made with it set
    /// to docs/images), else the test's own folder.
    static func screenshotDirectory(default dir: URL) -> String {
        ProcessInfo.processInfo.environment["FAULTLINE_SCREENSHOTS"] ?? dir.path
    }
}

/// `faultline ui` serving a capture that `write` makes (at the path it is given) in a
/// fresh folder named after `label`: the folder, the running command and the page's address.
func serveCapture(_ label: String, write: (String) throws -> Void) throws -> (dir: URL, ui: ChildProcess, address: String?) {
    let dir = TestEnvironment.temporaryDirectory(label)
    let capture = dir.appendingPathComponent("\(label).jsonl").path
    try write(capture)
    let ui = try ChildProcess.faultline(["ui", capture, "--listen", "127.0.0.1:0"])
    return (dir, ui, uiAddress(ui.waitForLine(timeout: 120) { $0.hasPrefix("UI on ") }))
}

/// The UI's address from a `UI on http://127.0.0.1:PORT/` line.
func uiAddress(_ line: String?) -> String? {
    guard let line, let start = line.range(of: "http://") else { return nil }
    return String(line[start.lowerBound...].prefix { $0 != " " })
}
