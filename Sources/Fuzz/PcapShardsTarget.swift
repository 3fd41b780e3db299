import Capture
import Glibc
import Pcap

extension FuzzTarget {
    /// The input read as a pcap twice, serially and on three shards (flows dealt out by
    /// hash, merged back in packet order), with caps small enough that inputs reach them:
    /// the records, warnings and final error must be the same. Covers the merge, the id
    /// renumbering, the end's flush order and the switch to a serial read at a global bound.
    static let pcapShards = FuzzTarget(
        name: "pcap-shards",
        summary: "pcap/pcapng from memory decoded serially and on 3 shards: records, warnings and errors must be equal") { input in
        guard let base = input.baseAddress, !input.isEmpty else { return }
        func reader() throws(PcapError) -> PcapReader {
            guard let file = fmemopen(UnsafeMutableRawPointer(mutating: base), input.count, "rb") else {
                throw PcapError("fmemopen failed")
            }
            return try PcapReader(file: file, name: "fuzz.pcap")
        }
        var limits = PcapRecordSource.Limits()
        limits.maxPayload = 1 << 16
        limits.maxFlows = 8
        limits.maxConnections = 4
        func read(jobs: Int) -> ParallelRead<[UInt8]>? {
            guard let first = try? reader(),
                  var source = try? PcapRecordSource(reader: first, tool: "faultline fuzz", limits: limits, jobs: jobs,
                                                     reopen: reader) else { return nil }
            var lines: [[UInt8]] = []
            var failure: String?
            do {
                while let record = try source.next() { lines.append(RecordCoding.encode(record)) }
            } catch {
                failure = "\(error)"
            }
            return ParallelRead(records: lines, warnings: source.warnings, error: failure)
        }
        ParallelRead.requireSame(serial: read(jobs: 1), parallel: read(jobs: 3))
    }
}
