import Faults
import JSON
import ProxyCore
import Transport
import Vocabulary
import WebSocket

/// Everything a `ProxyServer` needs, checked before anything starts (`faultline proxy`
/// builds it from flags; `faultline demo` builds it in code).
struct ProxySettings: Sendable {
    var listen: HostPort
    var upstream: UpstreamURL
    /// Where to record, or nil for no capture.
    var recordPath: String?
    /// Replace an existing file at `recordPath` (`--overwrite`); otherwise starting fails.
    var overwriteRecord = true
    /// The `--fault` and `--faults` rules installed at start (also written to the header).
    var faultRules: [FaultRule] = []
    var seed: UInt64 = 0
    var strict = false
    var maxPayload = 64 * 1024 * 1024
    var maxConnections = 10_000
    /// Connections still in their handshake at most (`--max-pending`); see `ConnectionAdmission`.
    var maxPending = 1024
    var admission: ConnectionAdmission { ConnectionAdmission(maxConnections: maxConnections, maxPending: maxPending) }
    /// Sessions consult the fault engine even with no rules installed, so rules added later
    /// (control API) reach open connections. Off: a plain relay skips the fault checks.
    var faultsAlwaysOn = false
    /// Write-queue level (bytes) past which the other side stops being read.
    var highWaterMark = 1024 * 1024
    var lowWaterMark = 64 * 1024
    /// How long a socket we close may take to flush its queue before it is reset.
    var closeFlushTimeout: Int64 = 5_000_000
    var upstreamConnectTimeout: Int64 = 10_000_000
    /// Accept to open WebSocket at most (`--handshake-timeout`); see `RelayConfig.handshakeTimeout`.
    var handshakeTimeout: Int64 = RelayConfig.defaultHandshakeTimeout
    /// TLS to a `wss://` upstream (a client context: trust, verification, key log); nil for `ws://`.
    var upstreamTLS: TLSContext?
    /// TLS for clients (`--tls-cert`/`--tls-key`, a server context); nil for a plain listener.
    var listenerTLS: TLSContext?
    /// Forward mode (`--forward`): an HTTP proxy for any host; nil for the reverse proxy.
    var forward: ForwardSettings?
    /// Reverse mode's `--route HOST[/PATH]=UPSTREAM` table (empty: every client goes to `upstream`).
    var routes = ReverseRoutes()

    var relayConfig: RelayConfig {
        var config = RelayConfig(upstreamHost: upstream.hostHeader, upstreamPathPrefix: upstream.pathPrefix,
                                 maxPayload: maxPayload, strict: strict)
        config.handshakeTimeout = handshakeTimeout
        return config
    }

    /// The capture header's settings object.
    func headerSettings(boundListen: String) -> JSONObject {
        var object = JSONObject()
        object["listen"] = .string(boundListen)
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
