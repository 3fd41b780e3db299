import Foundation
import Testing
import TestSupport

/// docs/deploy.md's Kubernetes manifests are valid against the Kubernetes schemas
/// (`kubernetes-validate --strict`, pinned in Tools/setup, offline: the schemas ship with
/// it), and their `faultline` arguments are ones the proxy accepts.
@Suite struct DeployGuideTests {
    static let guide = TestEnvironment.path("docs/deploy.md")

    /// The guide's ```yaml blocks that are Kubernetes objects (they have an apiVersion);
    /// the Prometheus configs are not.
    static func manifests() throws -> [String] {
        let text = try String(contentsOfFile: guide, encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```yaml" { current = []; continue }
            if current != nil, line == "```" {
                let block = current!.joined(separator: "\n") + "\n"
                if block.contains("apiVersion:") { blocks.append(block) }
                current = nil
                continue
            }
            current?.append(line)
        }
        return blocks
    }

    static var validator: String {
        URL(fileURLWithPath: TestEnvironment.python).deletingLastPathComponent().appendingPathComponent("kubernetes-validate").path
    }

    static func validate(_ manifest: String) throws -> (status: Int32?, output: String) {
        let file = TestEnvironment.temporaryDirectory("faultline-deploy").appendingPathComponent("manifest.yaml")
        try manifest.write(to: file, atomically: true, encoding: .utf8)
        let run = try runCommand(validator, ["--strict", file.path], timeout: 60)
        return (run.status, run.stdout + run.stderr)
    }

    @Test func everyManifestIsValidKubernetes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.validator), "run Tools/setup: \(Self.validator) is missing")
        let manifests = try Self.manifests()
        #expect(manifests.count == 2, "the sidecar and the pool")
        for manifest in manifests {
            let (status, output) = try Self.validate(manifest)
            #expect(status == 0, "\(output)")
            let objects = manifest.components(separatedBy: "\n---\n").count
            #expect(output.components(separatedBy: " passed for resource ").count - 1 == objects, "\(output)")
        }
    }

    @Test func theValidatorRefusesAMistake() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.validator), "run Tools/setup: \(Self.validator) is missing")
        let sidecar = try #require(try Self.manifests().first)
        let broken = sidecar.replacingOccurrences(of: "containerPort: 8080", with: "containerPrt: 8080")
        #expect(broken != sidecar)
        let (status, output) = try Self.validate(broken)
        #expect(status == 1 && output.contains("ports.0: 'containerPort' is a required property"), "\(output)")
    }

    /// Every faultline container's args start a real proxy: the flags must parse and the
    /// proxy must come up (on loopback ports, local paths; stopped at once).
    @Test func theFaultlineArgumentsAreOnesTheProxyTakes() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-deploy")
        let token = directory.appendingPathComponent("token")
        try "test-token\n".write(to: token, atomically: true, encoding: .utf8)
        for manifest in try Self.manifests() {
            let lines = manifest.split(separator: "\n").map(String.init)
            guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "- proxy" }) else { continue }
            let indent = lines[start].prefix { $0 == " " }
            var args: [String] = []
            for line in lines[start...] {
                guard line.hasPrefix(indent + "- ") else { break }
                args.append(String(line.dropFirst(indent.count + 2)))
            }
            // The cluster's addresses and paths, made local: what is checked is the flags.
            args = args.map { arg in
                arg.replacingOccurrences(of: "$(POD_NAME)", with: "pod-1")
                    .replacingOccurrences(of: "0.0.0.0:8080", with: "127.0.0.1:0")
                    .replacingOccurrences(of: "0.0.0.0:8474", with: "0.0.0.0:0")
                    .replacingOccurrences(of: "127.0.0.1:8474", with: "127.0.0.1:0")
                    .replacingOccurrences(of: "127.0.0.1:8475", with: "127.0.0.1:0")
                    .replacingOccurrences(of: "/captures/", with: directory.path + "/")
                    .replacingOccurrences(of: "/etc/faultline/token", with: token.path)
                    .replacingOccurrences(of: "chat.default.svc.cluster.local", with: "127.0.0.1")
            }
            let proxy = try ChildProcess.faultline(args + ["--overwrite"])
            defer { proxy.stop() }
            #expect(proxy.waitForLine(timeout: 20) { $0.hasPrefix("listening on ") } != nil, "\(args): \(proxy.errorOutput)")
        }
    }
}
