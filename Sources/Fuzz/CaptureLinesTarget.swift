import Capture

extension FuzzTarget {
    /// Each line through both capture line decoders, which must agree (the direct one may
    /// only say "not sure", and only on a line the writer never writes); a decoded record
    /// must survive encoding and decoding again. The same bytes also make records from the
    /// record model (`FuzzRecords`): the direct decoder must take every line `encode` writes
    /// for them, and give the record back. What the analyzer makes of the records is
    /// `capture-analyzer`'s job: kept apart, this target runs several times faster on
    /// inputs a few lines long.
    static let captureLines = FuzzTarget(
        name: "capture-lines",
        summary: "direct vs tree-based capture line decoders (differential), re-encoding, every written record taken directly") { input in
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
            let bytes = Array(line)
            let tree = try? RecordCoding.decode(bytes)
            if let direct = bytes.withUnsafeBufferPointer({ RecordCoding.decodeDirectly($0) }) {
                require(direct == tree, "direct and tree decoders disagree on \(String(decoding: bytes, as: UTF8.self))")
            }
            guard let record = tree else { continue }
            requireTakenDirectly(record)
        }
        var records = FuzzRecords(input)
        while let record = records.next() { requireTakenDirectly(record) }
    }

    /// `record`'s line decodes directly, and both decoders give `record` back.
    private static func requireTakenDirectly(_ record: CaptureRecord) {
        if case .header = record { return }
        let line = RecordCoding.encode(record)
        let text = String(decoding: line, as: UTF8.self)
        let direct = line.dropLast().withUnsafeBufferPointer { RecordCoding.decodeDirectly($0) }
        require(direct != nil, "the direct decoder declined a line the writer wrote: \(text)")
        require(direct == record, "the direct decoder changed \(text)")
        require((try? RecordCoding.decode(line)) == record, "re-encoding changed \(text)")
    }
}
