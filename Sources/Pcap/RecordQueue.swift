import Capture

/// Records decoded from packets, waiting for `PcapRecordSource.next()`. A class so every
/// connection appends to the same queue without copying it.
final class RecordQueue {
    /// Optional so `popFirst` can move a record out (`take()`) instead of copying it and
    /// releasing the queue's copy later: a frame record holds several references.
    private var records: [CaptureRecord?] = []
    private var head = 0

    var isEmpty: Bool { head == records.count }

    func append(_ record: CaptureRecord) { records.append(record) }

    func popFirst() -> CaptureRecord? {
        guard head < records.count else { return nil }
        let record = records[head].take()
        head += 1
        if head == records.count {
            records.removeAll(keepingCapacity: true)
            head = 0
        }
        return record
    }
}
