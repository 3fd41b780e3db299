import Capture
import Pcap

/// Whether an input held a connection and, when it held none, what it did hold and what to
/// try: an empty or wrong input (a pcap of another port, a `--filter` that kept nothing, a
/// proxy no client reached) is unusable input, never a green "0 clients" report.
package struct InputInventory {
    /// Records of a connection: `open` (for a pcap, a WebSocket connection found),
    /// `upgrade`, `frame` and `close` (a fragment of a capture may hold frames only).
    package private(set) var connectionRecords = 0
    /// Records after the header, by `RecordCoding.recordTypes` index: only read while
    /// `connectionRecords` is 0, so records of a connection are not counted here (`observe`
    /// runs once per record; finding a type's index was a search by name).
    private var counts = [Int](repeating: 0, count: RecordCoding.recordTypes.count)

    package init() {}

    package mutating func observe(_ record: CaptureRecord) {
        let type: String
        switch record {
        case .header: return
        case .open, .upgrade, .frame: connectionRecords += 1; return
        case .end: type = "end"
        case .fault: type = "fault"
        case .note: type = "note"
        case .tunnel: type = "tunnel"
        case .http: type = "http"
        }
        if let index = RecordCoding.recordTypes.firstIndex(of: type) { counts[index] += 1 }
    }

    /// The one-line message for an input that held no connection, nor any record of one
    /// (nil when it held one):
    /// `name` is the input as the user gave it, `source` what read it.
    package func noConnectionMessage(_ name: String, source: any RecordSource) -> String? {
        guard connectionRecords == 0 else { return nil }
        let input = name == "-" ? "<stdin>" : name
        if let pcap = source as? PcapRecordSource { return Self.pcapMessage(input, pcap.inventory, filter: pcap.filter) }
        return captureMessage(input, source.header)
    }

    static func pcapMessage(_ input: String, _ held: TrafficInventory, filter: String?) -> String {
        let start = "\(input): no WebSocket connection found"
        let tryFilter = filter.map { " --filter '\($0)' may exclude it: try a wider filter, or none." } ?? ""
        guard held.packets > 0 else {
            if let filter { return "\(start): no packet passed --filter '\(filter)'. Try a wider filter, or none." }
            return "\(start): the file holds no packet. Check that the capture ran while the client connected."
        }
        guard held.tcpFlows > 0 else {
            let tcp = held.tcpPackets == 0 ? "none of them TCP" : "\(held.tcpPackets) TCP without data or a SYN"
            return "\(start): \(count(held.packets, "packet")), \(tcp).\(tryFilter) Capture the client's TCP traffic to its server (tcpdump -i any -w FILE 'tcp port PORT')."
        }
        var ports = held.busiestPorts(5).map { "port \($0.port) (\(count($0.flows, "flow")))" }
        if held.tcpFlows > ports.count, ports.count == 5 || held.flowsToOtherPorts > 0 { ports.append("...") }
        return "\(start): \(count(held.packets, "packet")), \(count(held.tcpFlows, "TCP flow")) (\(ports.joined(separator: ", "))), "
            + "none with a WebSocket upgrade or frames.\(tryFilter) WebSocket is found on any port by its HTTP upgrade; "
            + "TLS (wss://) cannot be read from a pcap: record through 'faultline proxy' instead, "
            + "or capture where the traffic is plain (the client's side of a TLS-terminating proxy)."
    }

    func captureMessage(_ input: String, _ header: CaptureHeader) -> String {
        let held = zip(RecordCoding.recordTypes, counts).filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
        let what = held.isEmpty ? "only its header" : "its header and \(held.joined(separator: ", ")) record\(counts.reduce(0, +) == 1 ? "" : "s")"
        var where_ = ""
        if let listen = header.settings["listen"]?.stringValue {
            where_ = " (written by \(header.source.isEmpty ? "faultline" : header.source) listening on \(listen))"
        }
        return "\(input): no connection recorded: the capture holds \(what)\(where_). "
            + "Point the client at the proxy's --listen address and stop the proxy after the client has connected."
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
