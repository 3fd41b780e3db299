import Capture
import Glibc
import Lifecycle
import Pcap

extension FuzzTarget {
    /// The input as a pcap or pcapng file read from memory (`fmemopen`): libpcap, link
    /// layers, IP, TCP reassembly, WebSocket detection and decoding, then the analyzer.
    static let pcap = FuzzTarget(
        name: "pcap",
        summary: "pcap/pcapng from memory: PcapReader + TCP reassembly + WebSocket detection + LiveAnalyzer") { input in
        guard let base = input.baseAddress, !input.isEmpty,
              let file = fmemopen(UnsafeMutableRawPointer(mutating: base), input.count, "rb"),
              let reader = try? PcapReader(file: file, name: "fuzz.pcap") else { return }
        var limits = PcapRecordSource.Limits()
        limits.maxPayload = 1 << 16
        limits.maxFlows = 64
        limits.maxConnections = 64
        guard var source = try? PcapRecordSource(reader: reader, tool: "faultline fuzz", limits: limits) else { return }
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: birdSpec))
        while let record = (try? source.next()) ?? nil { _ = analyzer.feed(record) }
        _ = source.warnings
        _ = analyzer.finish(at: nil)
    }
}
