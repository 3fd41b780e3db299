import Capture
import Glibc
import Faults
import JSON
import ProxyCore
import Transport
import Vocabulary
import WebSocket

/// Everything a `ProxyServer` needs, checked before anything starts (`faultline proxy`
/// builds it from flags; `faultline demo` builds it in code).
package struct ProxySettings: Sendable {
    package var listen: HostPort
    package var upstream: UpstreamURL
    /// Where to record, or nil for no capture.
    package var recordPath: String?
    /// Replace an existing file at `recordPath` (`--overwrite`); otherwise starting fails.
    package var overwriteRecord = true
    /// `--rotate`: the capture is written as numbered parts.
    package var recordRotation: CaptureRotation?
    /// The `--fault` and `--faults` rules installed at start (also written to the header).
    package var faultRules: [FaultRule] = []
    /// The lifecycle spec and values the capture is recorded under (its header's `spec`).
    package var recordedSpec: RecordedSpec?
    package var seed: UInt64 = 0
    /// `--replica NAME`: this proxy's name in a fleet (capture header, metrics label).
    package var replica: String?
    /// `--clock-offset`, for tests of fleet merges: microseconds added to the wall clock the
    /// capture header records, as a replica whose clock is off would write it.
    package var clockOffset: Int64 = 0
    package var strict = false
    package var maxPayload = 64 * 1024 * 1024
    package var maxConnections = 10_000
    /// Connections still in their handshake at most (`--max-pending`); see `ConnectionAdmission`.
    package var maxPending = 1024
    package var admission: ConnectionAdmission { ConnectionAdmission(maxConnections: maxConnections, maxPending: maxPending) }
    /// Sessions consult the fault engine even with no rules installed, so rules added later
    /// (control API) reach open connections. Off: a plain relay skips the fault checks.
    package var faultsAlwaysOn = false
    /// Write-queue level (bytes) past which the other side stops being read.
    package var highWaterMark = 1024 * 1024
    package var lowWaterMark = 64 * 1024
    /// How long a socket we close may take to flush its queue before it is reset.
    package var closeFlushTimeout: Int64 = 5_000_000
    package var upstreamConnectTimeout: Int64 = 10_000_000
    /// Accept to open WebSocket at most (`--handshake-timeout`); see `RelayConfig.handshakeTimeout`.
    package var handshakeTimeout: Int64 = RelayConfig.defaultHandshakeTimeout
    /// TLS to a `wss://` upstream (a client context: trust, verification, key log); nil for `ws://`.
    package var upstreamTLS: TLSContext?
    /// TLS for clients (`--tls-cert`/`--tls-key`, a server context); nil for a plain listener.
    package var listenerTLS: TLSContext?
    /// Forward mode (`--forward`): an HTTP proxy for any host; nil for the reverse proxy.
    package var forward: ForwardSettings?
    /// Reverse mode's `--route HOST[/PATH]=UPSTREAM` table (empty: every client goes to `upstream`).
    package var routes = ReverseRoutes()

    package init(listen: HostPort, upstream: UpstreamURL) {
        self.listen = listen
        self.upstream = upstream
    }

    /// Bytes of large frames gathered whole for fault rules, over every connection of this
    /// proxy: one instance, handed to each connection's `relayConfig`. (Each config once
    /// made its own, so every connection had the whole budget: 100 clients sending 60 MB
    /// frames under `drop-message` took the proxy to 5 GB.)
    package let largeFrameBudget = LargeFrameBudget()

    /// Where the control API (and the UI through it) pauses connections and decides on
    /// their held messages: one per proxy, handed to each connection's `relayConfig`.
    package let interceptDesk = InterceptDesk()

    /// How each connection's protocol entry is chosen; nil: `RelayConfig`'s default, detected
    /// per connection through the table. `--spec` names one (`ProxyCommand` sets it).
    package var protocolChoice: ProtocolChoice?

    /// One connection's relay settings; every connection's share `largeFrameBudget`.
    package var relayConfig: RelayConfig {
        var config = RelayConfig(upstreamHost: upstream.hostHeader, upstreamPathPrefix: upstream.pathPrefix,
                                 maxPayload: maxPayload, strict: strict)
        config.handshakeTimeout = handshakeTimeout
        config.largeFrameBudget = largeFrameBudget
        config.intercept = interceptDesk
        if let protocolChoice { config.protocolChoice = protocolChoice }
        return config
    }

    /// This machine's host name (a replica's identity in a fleet), nil if it cannot be read.
    static var hostName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// The capture header's settings object.
    package func headerSettings(boundListen: String) -> JSONObject {
        var object = JSONObject()
        object["listen"] = .string(boundListen)
        if let replica { object[CaptureHeader.replicaKey] = .string(replica) }
        if let host = Self.hostName { object[CaptureHeader.hostKey] = .string(host) }
        object["upstream"] = .string(upstream.description)
        object["faults"] = .array(faultRules.map { .string($0.text) })
        object["seed"] = .int(Int64(bitPattern: seed))
        object["strict"] = .bool(strict)
        object["max_payload"] = .int(Int64(maxPayload))
        object["max_connections"] = .int(Int64(maxConnections))
        object["max_pending"] = .int(Int64(admission.maxPending))
        object["handshake_timeout"] = .double(Double(handshakeTimeout) / 1_000_000)
        object["tls_listener"] = .bool(listenerTLS != nil)
        if let upstreamTLS { object["tls_upstream_verified"] = .bool(upstreamTLS.verifies) }
        forward?.describe(into: &object)
        routes.describe(into: &object)
        return object
    }
}
