import Synchronization
import Vocabulary

/// Upstreams that lead back into this process. A proxy whose upstream is its own listener
/// (a typo on the command line, one toxiproxy API call) turns one client connection into an
/// endless chain of connections to itself; so does a ring of proxies of this process
/// (A's upstream is B, B's is A). `ProxyServer.start` refuses both before it accepts
/// anything, by following upstreams through the listeners this process runs. What this
/// cannot see (a host name that resolves to this machine, a ring through another process)
/// the `Via` header catches on the wire (`ViaHeader`, answered 508). A forward proxy's
/// targets come per request: a CONNECT or absolute-form request whose target is one of
/// these listeners is answered 508 (`ForwardClient`), tunnel or not.
package struct ProxyListeners: Sendable {
    /// Each running proxy's bound listener and the upstreams it forwards to.
    package private(set) var running: [(listener: HostPort, upstreams: [HostPort])] = []

    package init() {}

    package mutating func add(_ listener: HostPort, upstreams: [HostPort]) { running.append((listener, upstreams)) }

    package mutating func remove(_ listener: HostPort) { running.removeAll { $0.listener == listener } }

    /// The listeners a connection from a new proxy at `listener` to `upstreams` would pass
    /// through before arriving back at `listener` (just `[listener]` for an upstream that is
    /// the listener itself), or nil when none leads back.
    package func loop(from listener: HostPort, upstreams: [HostPort]) -> [HostPort]? {
        var seen: [HostPort] = []
        var queue = upstreams.map { (address: $0, path: [HostPort]()) }
        while !queue.isEmpty {
            let (address, path) = queue.removeFirst()
            if Self.reaches(address, listener) { return path + [listener] }
            for entry in running where Self.reaches(address, entry.listener) && !seen.contains(entry.listener) {
                seen.append(entry.listener)
                queue += entry.upstreams.map { ($0, path + [entry.listener]) }
            }
        }
        return nil
    }

    /// Whether connecting to `upstream` arrives at a socket listening on `listener` (as
    /// bound: "0.0.0.0" and "::" listen on every address). Names other than `localhost`
    /// are not resolved: the `Via` check covers them.
    package static func reaches(_ upstream: HostPort, _ listener: HostPort) -> Bool {
        guard upstream.port == listener.port else { return false }
        let to = upstream.host.lowercased(), at = listener.host.lowercased()
        if to == at { return true }
        let wildcards: Set<String> = ["0.0.0.0", "::", "0:0:0:0:0:0:0:0", ""]
        // Connecting to 0.0.0.0 or :: reaches this machine's own listeners (Linux).
        let local = wildcards.contains(to) || isLoopback(to)
        if wildcards.contains(at) { return local }
        switch at {
        case "127.0.0.1": return to == "localhost" || wildcards.contains(to)
        case "::1", "0:0:0:0:0:0:0:1": return to == "localhost" || to == "::1" || to == "0:0:0:0:0:0:0:1" || wildcards.contains(to)
        default: return false
        }
    }

    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" || host.hasPrefix("127.")
    }

    /// The running listener that a connection to `target` would arrive at, if any: a
    /// forward proxy asked to CONNECT to (or fetch from) its own address would relay each
    /// request into itself.
    package func listener(reachedBy target: HostPort) -> HostPort? {
        running.first { Self.reaches(target, $0.listener) }?.listener
    }

    /// The proxies of this process (every `ProxyServer` registers its listener while it runs).
    package static let process = Mutex(ProxyListeners())
}
