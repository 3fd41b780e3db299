import Capture
import Foundation
import JSON
import Testing
import TestSupport

/// `faultline frames` and `faultline synth`, run as the built binary.
@Suite struct FramesCommandTests {
    static let sample = TestEnvironment.path("Captures/sample-session.jsonl")

    @Test func jsonOutputHasTheContractFields() throws {
        let run = try runFaultline(["frames", Self.sample, "--format", "json"])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        var reader = try CaptureReader(path: Self.sample)
        var frames: [FrameRecord] = []
        while let record = try reader.nextRecord() { if case .frame(let f) = record { frames.append(f) } }
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == frames.count)
        #expect(frames.count > 50)
        var closes = 0, events = Set<String>()
        for (line, frame) in zip(lines, frames) {
            let object = try #require(try JSONParser.parse(String(line)).objectValue)
            #expect(object["conn"]?.intValue == Int64(frame.conn))
            let t = try #require(object["t"]?.doubleValue)
            #expect(abs(t - Double(frame.t) / 1e6) < 1e-6)
            #expect(object["from"]?.stringValue == frame.from.rawValue)
            #expect(object["opcode"]?.intValue == Int64(frame.opcode.rawValue))
            #expect(object["fin"]?.boolValue == frame.fin)
            #expect(object["rsv1"]?.boolValue == frame.rsv1)
            #expect(object["len"]?.intValue == Int64(frame.length))
            if frame.opcode == .close {
                closes += 1
                #expect(object["close_code"]?.intValue == Int64(frame.closeCode!))
                #expect(object["close_reason"]?.stringValue != nil)
            } else {
                #expect(object["close_code"] == nil)
            }
            if let event = object["event"]?.stringValue { events.insert(event) }
            #expect(object["action"] == nil, "synth frames are all forwarded")
        }
        #expect(closes > 0)
        #expect(events.isSuperset(of: ["bird:connection_established", "bird:subscribe", "bird_internal:subscription_succeeded"]))
    }

    @Test func textOutputIsOneLinePerFrame() throws {
        let run = try runFaultline(["frames", Self.sample])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("bird:connection_established") && $0.contains("server->client") })
        #expect(lines.contains { $0.contains("close") && $0.contains("code=") })
    }

    @Test func standardInputWorks() throws {
        let piped = try runCommand("/bin/sh", ["-c", "cat '\(Self.sample)' | '\(TestEnvironment.faultlineBinary)' frames - --format json"])
        let direct = try runFaultline(["frames", Self.sample, "--format", "json"])
        #expect(piped.status == 0)
        #expect(piped.stdout == direct.stdout)
        let redirected = try runCommand("/bin/sh", ["-c", "'\(TestEnvironment.faultlineBinary)' frames - --format json < '\(Self.sample)'"])
        #expect(redirected.stdout == direct.stdout)
    }

    @Test func notACaptureExitsTwoNamingTheFile() throws {
        let run = try runFaultline(["frames", "/etc/hostname"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("faultline: /etc/hostname: is not a recognized input (expected one of: faultline capture"))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    @Test func missingFileExitsTwo() throws {
        let run = try runFaultline(["frames", "/nonexistent.jsonl"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("/nonexistent.jsonl: cannot open: No such file or directory"))
    }

    @Test func badLineExitsTwoNamingFileAndLine() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[5]) + #"{"type":"frmae"}"# + "\n")
        let run = try runFaultline(["frames", path, "--format", "json"])
        #expect(run.status == 2)
        #expect(run.stdout.split(separator: "\n").count == 1, "frames before the bad line are printed")
        #expect(run.stderr == #"faultline frames: \#(path):3: unknown record type "frmae" (expected one of: open, upgrade, frame, close, end, fault, note)"#)
    }

    @Test func tornTailIsAWarningOnStandardError() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[5]) + #"{"type":"frame","co"#)
        let run = try runFaultline(["frames", path])
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == 1)
        #expect(run.stderr.hasPrefix("faultline: warning: \(path):3: torn last line"))
    }

    @Test func synthIsDeterministicForASeed() throws {
        let a = Fixtures.temporaryFile("a.jsonl"), b = Fixtures.temporaryFile("b.jsonl"), c = Fixtures.temporaryFile("c.jsonl")
        #expect(try runFaultline(["synth", "--out", a, "--records", "300", "--clients", "4", "--seed", "9"]).status == 0)
        #expect(try runFaultline(["synth", "--out", b, "--records", "300", "--clients", "4", "--seed", "9"]).status == 0)
        #expect(try runFaultline(["synth", "--out", c, "--records", "300", "--clients", "4", "--seed", "10"]).status == 0)
        let bytesA = try Data(contentsOf: URL(fileURLWithPath: a))
        #expect(bytesA == (try Data(contentsOf: URL(fileURLWithPath: b))))
        #expect(bytesA != (try Data(contentsOf: URL(fileURLWithPath: c))))
        let records = try Fixtures.readAll(a).records
        #expect(records.count >= 300)
        // Time order, and connection ids from 1 in order of opening.
        let times = records.compactMap(\.time)
        #expect(times == times.sorted())
        let opens = records.compactMap { if case .open(let o) = $0 { o.conn } else { nil } }
        #expect(opens == Array(1...opens.count))
    }

    @Test func synthStopsAtASize() throws {
        let path = Fixtures.temporaryFile("sized.jsonl")
        #expect(try runFaultline(["synth", "--out", path, "--size", "200K", "--clients", "20"]).status == 0)
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        #expect(size >= 200 * 1024)
        #expect(size < 200 * 1024 + 4096)
    }

    @Test func synthRejectsBadValues() throws {
        let run = try runFaultline(["synth", "--out", "/tmp/x.jsonl", "--size", "lots"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("invalid value 'lots' for '--size'"))
        let unwritable = try runFaultline(["synth", "--out", "/nonexistent-dir/x.jsonl"])
        #expect(unwritable.status == 2)
        #expect(unwritable.stderr.contains("/nonexistent-dir/x.jsonl: cannot create capture file"))
    }
}
