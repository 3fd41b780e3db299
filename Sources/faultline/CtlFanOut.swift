import CLI
import ControlAPI
import Foundation
import Glibc
import JSON
import Synchronization

/// `faultline ctl --proxy A --proxy B ... ACTION`: one action sent to every replica of a
/// fleet at once (a thread per replica, each request bounded by --timeout), the answers
/// shown side by side (`CtlFleetOutput`). Exit status: 0 when every replica answered with
/// success, 1 when one answered an error or did not answer (each named on standard error).
enum CtlFanOut {
    /// The most replicas one command addresses (a thread each).
    static let maxProxies = 256

    /// The replicas of --proxy and --proxies FILE, in that order, each checked; empty when neither was given.
    static func proxies(_ arguments: ParsedArguments, command: String) throws -> [String] {
        var list = try arguments.all("proxy").map { try CtlCommand.controlAddress($0, command: command) }
        if let file = arguments.value("proxies") {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 1 << 20 else {
                throw UsageError("\(command): --proxies: cannot read '\(file)' (or it is over 1 MiB)")
            }
            for (n, raw) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces)
                guard !line.isEmpty else { continue }
                do { list.append(try CtlCommand.controlAddress(line, command: command)) } catch {
                    throw UsageError("\(command): --proxies \(file):\(n + 1): \(error.message)")
                }
            }
            if list.isEmpty { throw UsageError("\(command): --proxies \(file): no HOST:PORT in the file") }
        }
        if !list.isEmpty, arguments.value("control") != nil {
            throw UsageError("\(command): --control names one proxy, --proxy and --proxies a fleet: give one or the other (add the --control address as a --proxy)")
        }
        guard list.count <= maxProxies else { throw UsageError("\(command): at most \(maxProxies) proxies (got \(list.count))") }
        for address in list {
            do { _ = try ControlClient(address: address) } catch { throw UsageError("\(command): --proxy \(error)") }
        }
        return list
    }

    static func run(_ action: String, _ args: [String], proxies: [String], token: String?, timeout: Double,
                    json: Bool, command: String) throws -> Int32 {
        let clients = proxies.map { try! ControlClient(address: $0, token: token, timeout: timeout) }   // checked in `proxies`
        if action == "watch" { return watch(clients, command: command) }
        var answers: [CtlFleetOutput.Answer]
        if action == "apply", args[0].hasPrefix("client=") {
            let key = String(args[0].dropFirst("client=".count))
            guard !key.isEmpty else { throw UsageError("\(command) apply: client= needs a key to match") }
            let listed = ask(clients) { _ in ("GET", "/connections", nil) }
            report(listed.filter { $0.response == nil }, command: command)
            let holders = CtlFleetOutput.holders(of: key, in: listed)
            guard !holders.isEmpty else {
                Console.err("\(command): no proxy holds an open connection of client '\(key)' (asked \(listed.filter(\.succeeded).count) of \(clients.count))\n")
                return ExitStatus.failure
            }
            let body = Array(JSONWriter.serialize(["rule": .string(args[1])]).utf8)
            answers = ask(holders.map { clients[$0.answer] }) { i in ("POST", "/connections/\(holders[i].connection)/apply", body) }
            answers += listed.filter { $0.response == nil }   // unanswered: still named in the exit status
        } else {
            if action == "apply", clients.count > 1 {
                throw UsageError("\(command) apply: with several proxies a connection id is ambiguous; give client=KEY (the replica holding the client is found), or --control one proxy")
            }
            let (method, path, body) = try CtlCommand.request(action, args, command: command)
            answers = ask(clients) { _ in (method, path, body) }
        }
        Console.out(CtlFleetOutput.render(action, answers, json: json))
        report(answers, command: command)
        return answers.allSatisfy(\.succeeded) ? ExitStatus.success : ExitStatus.failure
    }

    /// Every replica that did not answer, or answered an error, named on standard error.
    static func report(_ answers: [CtlFleetOutput.Answer], command: String) {
        for answer in answers where !answer.succeeded {
            if let response = answer.response {
                Console.err(CtlCommand.errorMessage(response, command: "\(command): \(answer.proxy)") + "\n")
            } else {
                Console.err(TerminalText.escape("\(command): \(answer.proxy) did not answer: \(answer.failure ?? "no answer")") + "\n")
            }
        }
    }

    /// One request to each client at once; the answers in the clients' order.
    static func ask(_ clients: [ControlClient], request: @escaping @Sendable (Int) -> (String, String, [UInt8]?)) -> [CtlFleetOutput.Answer] {
        let answers = Mutex<[CtlFleetOutput.Answer?]>(Array(repeating: nil, count: clients.count))
        onThreads(clients.count) { i in
            let (method, path, body) = request(i)
            let answer: CtlFleetOutput.Answer
            do {
                answer = CtlFleetOutput.Answer(proxy: clients[i].address, response: try clients[i].send(method, path, body: body))
            } catch {
                answer = CtlFleetOutput.Answer(proxy: clients[i].address, failure: "\(error)")
            }
            answers.withLock { $0[i] = answer }
        }
        return answers.withLock { $0.map { $0! } }
    }

    /// `watch` on every replica: one thread per stream, each event printed as it comes with
    /// its "proxy" added, until every stream has ended.
    static func watch(_ clients: [ControlClient], command: String) -> Int32 {
        let output = NSLock()
        let failed = Mutex(false)
        onThreads(clients.count) { i in
            let client = clients[i]
            do {
                let refused = try client.stream("/events") { line in
                    let tagged = CtlFleetOutput.watchLine(line, proxy: client.address) + "\n"
                    output.lock()
                    Console.out(tagged)
                    output.unlock()
                }
                if let refused {
                    failed.withLock { $0 = true }
                    Console.err(CtlCommand.errorMessage(refused, command: "\(command): \(client.address)") + "\n")
                }
            } catch {
                failed.withLock { $0 = true }
                Console.err(TerminalText.escape("\(command): \(client.address) did not answer: \(error)") + "\n")
            }
        }
        return failed.withLock { $0 } ? ExitStatus.failure : ExitStatus.success
    }

    /// Runs `body(0..<count)` each on its own thread and waits for all: a request blocks
    /// (bounded by --timeout) and a watch stream lasts as long as its proxy, so they cannot
    /// share a pool sized to the cores.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for i in 0..<count {
            group.enter()
            let thread = Thread {
                body(i)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }
}
