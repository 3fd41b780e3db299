/// Which inputs are parts of one rotated recording (`proxy --rotate`), so that they are read
/// as one: their headers carry the same `recording` id, and `part` orders them. Pure: the
/// caller reads the headers.
public enum RecordingParts {
    /// One thing to read: a single input, or a rotated recording's parts in part order.
    public struct Group: Sendable, Equatable {
        /// Indices into the inputs given, in reading order.
        public var inputs: [Int]
        /// The recording id when this is a set of parts.
        public var recording: String?
    }

    /// Groups `headers` (nil for an input whose header is not read up front, such as
    /// standard input: it stands alone). A group sits where its first input was given;
    /// parts are ordered by number whatever order they were given in. Warnings name parts
    /// that are missing (a gap, or a set not starting at part 1) and parts given twice
    /// (read once).
    public static func group(_ headers: [CaptureHeader?], names: [String]) -> (groups: [Group], warnings: [String]) {
        var groups: [Group] = []
        var warnings: [String] = []
        var groupOfRecording: [String: Int] = [:]
        for (index, header) in headers.enumerated() {
            guard let header, let recording = header.recording, let part = header.part, part >= 1 else {
                groups.append(Group(inputs: [index]))
                continue
            }
            if let existing = groupOfRecording[recording] {
                if let twin = groups[existing].inputs.first(where: { headers[$0]?.part == part }) {
                    warnings.append("\(names[index]): part \(part) of recording \(recording) again (also \(names[twin])): read once")
                    continue
                }
                groups[existing].inputs.append(index)
            } else {
                groupOfRecording[recording] = groups.count
                groups.append(Group(inputs: [index], recording: recording))
            }
        }
        for g in groups.indices where groups[g].recording != nil {
            groups[g].inputs.sort { (headers[$0]?.part ?? 0) < (headers[$1]?.part ?? 0) }
            let parts = groups[g].inputs.map { headers[$0]?.part ?? 0 }
            var expected = 1
            for (position, part) in parts.enumerated() {
                if part > expected {
                    let range = part - 1 == expected ? "part \(expected) is" : "parts \(expected) to \(part - 1) are"
                    let place = position == 0 ? "before \(names[groups[g].inputs[position]])"
                        : "between \(names[groups[g].inputs[position - 1]]) and \(names[groups[g].inputs[position]])"
                    warnings.append("recording \(groups[g].recording ?? ""): \(range) missing (\(place)): client timelines jump across the gap")
                }
                expected = part + 1
            }
        }
        return (groups, warnings)
    }
}

/// Reads several record sources one after the other as one: a rotated recording's parts.
/// Each part is opened only when the one before it ends, so one file is open at a time.
/// The header is the first part's; warnings are every part's, each naming its file.
public struct ChainedRecordSource: RecordSource {
    public let header: CaptureHeader
    public private(set) var warnings: [String] = []
    private let names: [String]
    private let open: (String) throws -> any RecordSource
    private var current: (any RecordSource)?
    private var nextIndex = 1
    private let prefixWarnings: Bool

    /// `first` is `names[0]` already opened; `open` opens the others by name.
    public init(names: [String], first: any RecordSource, open: @escaping (String) throws -> any RecordSource) {
        self.names = names
        self.header = first.header
        self.current = first
        self.open = open
        prefixWarnings = names.count > 1
    }

    public mutating func next() throws -> CaptureRecord? {
        while var source = current {
            if let record = try source.next() {
                current = source
                return record
            }
            warnings += source.warnings.map { prefixWarnings && !$0.hasPrefix(names[nextIndex - 1]) ? "\(names[nextIndex - 1]): \($0)" : $0 }
            current = nil
            guard nextIndex < names.count else { return nil }
            current = try open(names[nextIndex])
            nextIndex += 1
        }
        return nil
    }
}
