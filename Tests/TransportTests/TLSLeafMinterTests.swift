import Testing
@testable import Transport

/// The forward proxy's per-host certificates: signed by the given CA, cached per name.
@Suite struct TLSLeafMinterTests {
    @Test func mintsOncePerHostAndRefusesAMismatchedCAKey() throws {
        let authority = try TLSCertificates.makeAuthority()
        let minter = try TLSLeafMinter(authority: authority)
        let first = try minter.context(for: "api.example.com")
        #expect(try minter.context(for: "API.example.com") === first, "cached, case-insensitively")
        _ = try minter.context(for: "127.0.0.1")
        #expect(minter.minted == 2)
        #expect(first.role == .server)

        let other = try TLSCertificates.makeAuthority()
        let mismatched = TLSIdentity(certificatePEM: authority.certificatePEM, privateKeyPEM: other.privateKeyPEM)
        #expect(throws: TransportError.self) { try TLSLeafMinter(authority: mismatched) }
        #expect(throws: TransportError.self) { try minter.context(for: "bad name") }
    }
}
