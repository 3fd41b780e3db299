import Capture
import Pcap

extension FuzzTarget {
    /// A capture's lines, decoded, through `PcapExporter` to /dev/null: synthetic TCP legs,
    /// re-encoded and re-deflated frames, ends, comments, with any ids, times, actions and
    /// extensions. The connections it holds never outnumber the records that made them.
    static let export = FuzzTarget(
        name: "export",
        summary: "capture lines decoded and written by PcapExporter (pcapng of synthetic TCP) to /dev/null") { input in
        guard var exporter = try? PcapExporter(path: "/dev/null") else { fatalError("cannot open /dev/null") }
        var records = 0
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
            guard let record = try? RecordCoding.decode(Array(line)) else { continue }
            exporter.add(record)
            records += 1
        }
        require(exporter.connectionsHeld <= records, "more connections held (\(exporter.connectionsHeld)) than records (\(records))")
        exporter.finish()
    }
}
