import CLI
import Vocabulary

/// Names, upstream URLs and listen addresses from toxiproxy API clients, checked before a
/// backend sees them. A proxy's name becomes part of its capture's file name
/// (`cap.NAME.jsonl`): a NUL cut that path short (`cap.jsonl\0` named the main capture,
/// replaced under `--overwrite`), a dot made two proxies' files collide (`a` run 2 and
/// `a.2` run 1), and ESC went into the directory listing. An upstream URL goes into the
/// request line sent upstream (CR LF: a second header or request). A listen address
/// decides who can reach the proxy: the API itself is loopback-only, so its proxies are too.
public enum ToxiproxyNames {
    public static let maxLength = 128

    /// Why `name` cannot name a proxy or toxic (`what`), or nil: 1 to 128 ASCII letters,
    /// digits, '_' and '-', not starting with '-' (toxiproxy's own names, such as
    /// `redis_master` or `latency_downstream`, are of this form).
    public static func problem(_ name: String, what: String) -> String? {
        let safe = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x5F || byte == 0x2D
        }
        guard !safe || name.isEmpty || name.utf8.count > maxLength || name.hasPrefix("-") else { return nil }
        return "bad \(what) name \"\(TerminalText.escape(String(name.prefix(maxLength + 1))))\": 1 to \(maxLength) "
            + "letters, digits, '_' and '-', not starting with '-'"
    }

    /// Why `upstream` (`HOST:PORT` or `ws://HOST:PORT[/PATH]`) cannot be served, or nil
    /// (its host and port are read by the backend).
    public static func upstreamProblem(_ upstream: String) -> String? {
        guard !upstream.isEmpty else { return "upstream: missing" }
        if case .failure(let error) = WebSocketURL.parse(upstream.contains("://") ? upstream : "ws://" + upstream) {
            return "upstream: \(error)"
        }
        return nil
    }

    /// Why a proxy may not listen on `listen`, or nil: a loopback address, unless the proxy
    /// was started with `--control-allow-remote` (`allowRemote`).
    public static func listenProblem(_ listen: String, allowRemote: Bool) -> String? {
        let address: HostPort
        switch HostPort.parse(listen) {
        case .success(let parsed): address = parsed
        case .failure(let error): return "listen: \(error)"
        }
        guard allowRemote || LoopbackHost.isLoopback(host: address.host) else {
            return "listen: \(address) is not a loopback address; a toxiproxy API proxy listens on loopback only, "
                + "like the API (start faultline proxy with --control-allow-remote to allow others)"
        }
        return nil
    }
}
