import Testing

/// TCP ends after the close handshake reach each peer as the other peer sent them (issue
/// 17 item 2), checked on the wire with tcpdump like the other `WireFidelityTests`.
extension WireFidelityTests {
    /// The server answers the client's close frame and then resets the connection. The
    /// proxy used to close both sockets with a FIN as soon as the handshake was through, so
    /// the client saw a FIN where the server had sent an RST.
    @Test func aServerResetAfterTheCloseHandshakeReachesTheClientAsAReset() throws {
        _ = try check(fault: [], server: ["--mode", "close-then-rst"], client: ["--mode", "bird", "--wait", "0.5"],
                      awaited: ["upstream leg, from server": "rst", "client leg, from server": "rst"])
    }
}
