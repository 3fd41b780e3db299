import Vocabulary

/// The note a proxy writes when a connection's upstream leg connects: where that leg runs
/// (`upstream leg: 127.0.0.1:40022 -> 127.0.0.1:7001`), since the open record holds only
/// the client's leg. `faultline export --pcap` reads it back to draw the upstream leg's TCP
/// conversation. Part of the capture format, so the writer (the proxy) and the reader
/// (the exporter) share this one spelling.
extension NoteRecord {
    static let upstreamLegPrefix = "upstream leg: "

    /// The note for connection `conn`'s upstream leg, from the proxy's `local` address to
    /// the server's `remote` one.
    public static func upstreamLeg(conn: ConnectionID, t: Micros, local: String, remote: String) -> NoteRecord {
        NoteRecord(conn: conn, t: t, level: .info, message: upstreamLegPrefix + "\(local) -> \(remote)")
    }

    /// The upstream leg's addresses, when this is such a note.
    public var upstreamLeg: (local: String, remote: String)? {
        guard message.hasPrefix(Self.upstreamLegPrefix) else { return nil }
        let parts = message.dropFirst(Self.upstreamLegPrefix.count).split(separator: " ")
        guard parts.count == 3, parts[1] == "->" else { return nil }
        return (String(parts[0]), String(parts[2]))
    }
}
