import Capture

extension FuzzTarget {
    /// Each line through both capture line decoders, which must agree (the direct one may
    /// only say "not sure"); a decoded record must survive encoding and decoding again.
    /// What the analyzer makes of the records is `capture-analyzer`'s job: kept apart, this
    /// target runs several times faster on inputs a few lines long.
    static let captureLines = FuzzTarget(
        name: "capture-lines",
        summary: "direct vs tree-based capture line decoders (differential), re-encoding") { input in
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
            let bytes = Array(line)
            let tree = try? RecordCoding.decode(bytes)
            if let direct = bytes.withUnsafeBufferPointer({ RecordCoding.decodeDirectly($0) }) {
                require(direct == tree, "direct and tree decoders disagree on \(String(decoding: bytes, as: UTF8.self))")
            }
            guard let record = tree else { continue }
            let again = try? RecordCoding.decode(RecordCoding.encode(record))
            require(again == record, "re-encoding changed \(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
