import COpenSSL
import Capture
import Foundation
import JSON
import Testing
import TestSupport
import Vocabulary
import WebSocket

/// `faultline frames` and `faultline synth`, run as the built binary.
@Suite struct FramesCommandTests {
    static let sample = TestEnvironment.path("Captures/sample-session.jsonl")

    /// Runs a shell command line with `faultline` as `$F`, its output captured through files:
    /// every byte is there once the shell exits (pipes read by handlers may lag behind).
    static func shell(_ script: String) throws -> (status: Int32?, stdout: String, stderr: String) {
        let out = Fixtures.temporaryFile("stdout"), err = Fixtures.temporaryFile("stderr")
        let run = try runCommand("/bin/bash", ["-c", "F='\(TestEnvironment.faultlineBinary)'; { \(script); } > '\(out)' 2> '\(err)'"])
        let stdout = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        return (run.status, stdout.hasSuffix("\n") ? String(stdout.dropLast()) : stdout,
                stderr.hasSuffix("\n") ? String(stderr.dropLast()) : stderr)
    }

    static func frames(_ arguments: String) throws -> (status: Int32?, stdout: String, stderr: String) {
        try shell("\"$F\" frames \(arguments)")
    }

    @Test func jsonOutputHasTheContractFields() throws {
        let run = try Self.frames("'\(Self.sample)' --format json")
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
        let run = try Self.frames("'\(Self.sample)'")
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("bird:connection_established") && $0.contains("server->client") })
        #expect(lines.contains { $0.contains("close") && $0.contains("code=") })
    }

    @Test func standardInputWorks() throws {
        let piped = try Self.shell("cat '\(Self.sample)' | \"$F\" frames - --format json")
        let direct = try Self.frames("'\(Self.sample)' --format json")
        #expect(piped.status == 0)
        let frameCount = try Fixtures.readAll(Self.sample).records.filter { if case .frame = $0 { true } else { false } }.count
        #expect(direct.stdout.split(separator: "\n").count == frameCount)
        #expect(piped.stdout == direct.stdout)
        let redirected = try Self.frames("- --format json < '\(Self.sample)'")
        #expect(redirected.stdout == direct.stdout)
        // A pipe given by path (process substitution) is peeked without losing bytes too.
        let substituted = try Self.frames("<(cat '\(Self.sample)') --format json")
        #expect(substituted.status == 0)
        #expect(substituted.stdout == direct.stdout)
    }

    @Test func notACaptureExitsTwoNamingTheFile() throws {
        let run = try Self.frames("/etc/hostname")
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("faultline: /etc/hostname: is not a recognized input (expected one of: faultline capture"))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    @Test func missingFileExitsTwo() throws {
        let run = try Self.frames("/nonexistent.jsonl")
        #expect(run.status == 2)
        #expect(run.stderr.contains("/nonexistent.jsonl: cannot open: No such file or directory"))
    }

    @Test func badLineExitsTwoNamingFileAndLine() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[5]) + #"{"type":"frame"}"# + "\n")
        let run = try Self.frames("'\(path)' --format json")
        #expect(run.status == 2)
        #expect(run.stdout.split(separator: "\n").count == 1, "frames before the bad line are printed")
        #expect(run.stderr == #"faultline frames: \#(path):3: missing key "conn""#)
    }

    @Test func unknownRecordTypeIsAWarningAndSkipped() throws {
        let frame = Fixtures.line(Fixtures.records[5])
        let path = Fixtures.file(Fixtures.headerLine + frame + #"{"type":"frmae"}"# + "\n" + frame)
        let run = try Self.frames("'\(path)' --format json")
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == 2, "the frames around the unknown line are printed")
        #expect(run.stderr.contains(#"\#(path):3: record type "frmae" is not one this version reads"#))
    }

    @Test func tornTailIsAWarningOnStandardError() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[5]) + #"{"type":"frame","co"#)
        let run = try Self.frames("'\(path)'")
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

/// What makes a synthetic capture realistic enough for the analyzer: real accept keys and
/// private-channel signatures made with the secret the header records.
@Suite struct SynthRealismTests {
    @Test func handshakesAndSignaturesAreGenuine() throws {
        let path = Fixtures.temporaryFile("realism.jsonl")
        #expect(try runFaultline(["synth", "--out", path, "--records", "400", "--clients", "3", "--seed", "4"]).status == 0)
        var reader = try CaptureReader(path: path)
        let secret = try #require(reader.header.settings["app_secret"]?.stringValue)
        let appKey = try #require(reader.header.settings["app_key"]?.stringValue)
        var requestKeys: [ConnectionID: String] = [:], socketIDs: [ConnectionID: String] = [:]
        var accepts = 0, signatures = 0, closeCodes = Set<UInt16>()
        while let record = try reader.nextRecord() {
            switch record {
            case .upgrade(let u) where u.from == .client:
                #expect(u.target?.hasPrefix("/app/\(appKey)?protocol=7") == true)
                requestKeys[u.conn] = u.header("Sec-WebSocket-Key")
            case .upgrade(let u):
                #expect(u.status == 101)
                let key = try #require(requestKeys[u.conn])
                #expect(u.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptKey(for: key))
                accepts += 1
            case .frame(let f) where f.opcode == .text:
                let message = try JSONParser.parse(f.payload)
                if message["event"] == "bird:connection_established" {
                    let data = try JSONParser.parse(try #require(message["data"]?.stringValue))
                    socketIDs[f.conn] = data["socket_id"]?.stringValue
                    #expect(data["activity_timeout"] == 120)
                }
                if message["event"] == "bird:subscribe", let auth = message["data"]?["auth"]?.stringValue {
                    let channel = try #require(message["data"]?["channel"]?.stringValue)
                    let socketID = try #require(socketIDs[f.conn])
                    #expect(auth == appKey + ":" + hmacSHA256Hex(key: secret, "\(socketID):\(channel)"))
                    signatures += 1
                }
            case .frame(let f) where f.opcode == .close:
                if let code = f.closeCode { closeCodes.insert(code) }
            default:
                break
            }
        }
        #expect(accepts > 0)
        #expect(signatures > 0)
        #expect(!closeCodes.isEmpty)
    }

    func hmacSHA256Hex(key: String, _ message: String) -> String {
        let keyBytes = Array(key.utf8), data = Array(message.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), keyBytes, Int32(keyBytes.count), data, data.count, &digest, &length)
        return digest[0..<Int(length)].map { String(format: "%02x", $0) }.joined()
    }
}
