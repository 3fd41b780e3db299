import Capture
import Glibc
import Pcap

extension FuzzTarget {
    /// The input as a pcap or pcapng file read from memory (`fmemopen`): libpcap, link
    /// layers, IP, TCP reassembly, WebSocket detection and decoding, to the last record.
    /// The analyzer is left to `capture-analyzer`, which reaches it with any record, not
    /// only the ones a pcap yields, at a fraction of the cost per input.
    static let pcap = FuzzTarget(
        name: "pcap",
        summary: "pcap/pcapng from memory: PcapReader + TCP reassembly + WebSocket detection and decoding") { input in
        guard let base = input.baseAddress, !input.isEmpty,
              let file = fmemopen(UnsafeMutableRawPointer(mutating: base), input.count, "rb"),
              let reader = try? PcapReader(file: file, name: "fuzz.pcap") else { return }
        var limits = PcapRecordSource.Limits()
        limits.maxPayload = 1 << 16
        limits.maxFlows = 64
        limits.maxConnections = 64
        guard var source = try? PcapRecordSource(reader: reader, tool: "faultline fuzz", limits: limits) else { return }
        while (try? source.next()) ?? nil != nil {}
        _ = source.warnings
    }
}
