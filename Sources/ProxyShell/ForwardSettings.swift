import JSON
import Transport

/// Forward mode's settings (`faultline proxy --forward`): the CA that signs intercepted
/// hosts' certificates, the hosts tunnelled untouched, and the HTTP body limit.
package struct ForwardSettings: Sendable {
    package init(passthrough: [String] = []) { self.passthrough = passthrough }

    /// `--tls-ca` and `--tls-ca-key`: without them, TLS tunnels are relayed untouched.
    package var authority: TLSIdentity?
    /// `--passthrough HOST` (repeatable; `*.example.com` for a whole domain).
    package var passthrough: [String] = []
    /// Bytes of each HTTP body kept in an `http` record (the rest is counted, not kept).
    package var bodyLimit = 64 * 1024
    /// How long a client may take to send its request head (and a tunnel its first bytes)
    /// before the connection is closed, so idle connections cannot pile up.
    package var headTimeout: Int64 = 30_000_000

    /// Adds forward mode's settings to the capture header (`upstream` becomes "forward").
    package func describe(into object: inout JSONObject) {
        object["upstream"] = .string("forward")
        object["mode"] = .string("forward")
        object["tls_intercept"] = .bool(authority != nil)
        object["passthrough"] = .array(passthrough.map { .string($0) })
    }
}
