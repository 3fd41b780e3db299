import Capture
import Glibc

/// The inputs of `analyze` as things to read: each input alone, except the parts of a
/// rotated recording (`proxy --rotate`), which are read in part order as one input, so a
/// client's timeline goes on from one file to the next.
package enum InputSets {
    /// The groups of `paths` (each a list of paths in reading order), and warnings about
    /// missing or repeated parts. Only regular files' headers are read up front (a pipe or
    /// standard input can be read once only, so it stands alone).
    package static func group(_ paths: [String]) -> (sets: [[String]], warnings: [String]) {
        let headers = paths.map(partHeader)
        let (groups, warnings) = RecordingParts.group(headers, names: paths)
        return (groups.map { $0.inputs.map { paths[$0] } }, warnings)
    }

    /// The records of one group.
    package static func open(_ set: [String], options: InputSources.Options) throws -> any RecordSource {
        let first = try InputSources.open(set[0], options: options)
        guard set.count > 1 else { return first }
        return ChainedRecordSource(names: set, first: first) { try InputSources.open($0, options: options) }
    }

    /// The header of a capture file that is part of a rotated recording; nil for anything
    /// else (or anything unreadable: opening it for real reports why).
    private static func partHeader(_ path: String) -> CaptureHeader? {
        guard path != "-", CaptureWriter.isRegularFile(path),
              let (head, _) = try? InputSources.peek(path),
              CaptureCompression.detect(head) != nil || InputSources.isCapture(head),
              let reader = try? CaptureReader(path: path, maxLineLength: 1 << 20),
              reader.header.recording != nil else { return nil }
        return reader.header
    }
}
