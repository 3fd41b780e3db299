import Foundation
import Glibc
import Testing
import TestSupport

/// HAProxy (Debian's `haproxy`, installed by Tools/setup) on loopback, balancing TCP
/// connections round-robin over `backends`, with a generated config on ephemeral ports; no
/// system service. `mode tcp`: each WebSocket connection goes whole to one replica, as a
/// layer-4 load balancer in front of a fleet does.
final class HAProxy {
    static let executable = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let process: ChildProcess
    let port: Int

    init(backends: [Int]) throws {
        let executable = try #require(Self.executable, "haproxy is not installed (Tools/setup installs it)")
        let directory = TestEnvironment.temporaryDirectory("faultline-haproxy")
        var lastError = ""
        // A port free a moment ago may be taken by the time haproxy binds it: a few tries.
        for _ in 0..<3 {
            let port = Int(TestEnvironment.freePort()), ready = Int(TestEnvironment.freePort())
            let config = directory.appendingPathComponent("haproxy.cfg")
            try Self.config(port: port, ready: ready, backends: backends).write(to: config, atomically: true, encoding: .utf8)
            let process = try ChildProcess(executable, ["-db", "-f", config.path])
            if Self.waitUntilListening(ready, process: process) {
                self.process = process
                self.port = port
                return
            }
            process.stop()
            lastError = process.errorOutput.joined(separator: "\n")
        }
        throw HAProxyError(message: "haproxy did not start: \(lastError)")
    }

    deinit { process.stop() }

    struct HAProxyError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The frontend clients use, and a second one (`ready`) that only rejects: haproxy
    /// binds every listener before it serves, so a connection accepted there means the
    /// balancer is up, without sending a probe connection to a replica.
    static func config(port: Int, ready: Int, backends: [Int]) -> String {
        var text = """
            global
              maxconn 512
            defaults
              mode tcp
              timeout connect 2s
              timeout client 60s
              timeout server 60s
            frontend ready
              bind 127.0.0.1:\(ready)
              tcp-request connection reject
            frontend fleet
              bind 127.0.0.1:\(port)
              default_backend replicas
            backend replicas
              balance roundrobin

            """
        for (i, backend) in backends.enumerated() { text += "  server r\(i + 1) 127.0.0.1:\(backend)\n" }
        return text
    }

    /// Connects to `port` until it accepts, while haproxy runs; bounded to 10 s.
    static func waitUntilListening(_ port: Int, process: ChildProcess) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? RawSocket(port: port, receiveTimeout: 1)) != nil { return true }
            if process.waitForExit(timeout: 0.05) != nil { return false }   // it failed (a port taken): no point waiting
        }
        return false
    }
}

/// N recording `faultline proxy` replicas (`--replica r1` ...) in front of one upstream.
final class ProxyFleet {
    let replicas: [ChildProcess]
    let ports: [Int]
    let captures: [String]
    /// Control API addresses ("127.0.0.1:PORT"), when started with `control: true`.
    let controls: [String]

    init(count: Int, upstreamPort: Int, arguments: [String], clockOffsets: [Int: String] = [:], control: Bool = false) throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-fleet")
        var replicas: [ChildProcess] = [], ports: [Int] = [], captures: [String] = [], controls: [String] = []
        for i in 0..<count {
            let capture = directory.appendingPathComponent("r\(i + 1).jsonl").path
            var args = ["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(upstreamPort)",
                        "--record", capture, "--replica", "r\(i + 1)"] + arguments
            if let offset = clockOffsets[i] { args += ["--clock-offset", offset] }
            if control { args += ["--control", "127.0.0.1:0"] }
            let proxy = try ChildProcess.faultline(args)
            replicas.append(proxy)
            ports.append(try listeningPort(of: proxy, "replica r\(i + 1)"))
            captures.append(capture)
            if control {
                let line = try #require(proxy.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") })
                controls.append(String(line.dropFirst("control API on http://".count)))
            }
        }
        (self.replicas, self.ports, self.captures, self.controls) = (replicas, ports, captures, controls)
    }

    deinit { for replica in replicas { replica.stop() } }

    /// SIGINT to every replica; each must exit 0 with its capture complete.
    func stop() throws {
        for (replica, capture) in zip(replicas, captures) { _ = try stopRecordingProxy(replica, capture: capture) }
    }
}
