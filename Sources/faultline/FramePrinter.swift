import CLI
import Foundation
import Capture
import Inputs
import Reports

/// `faultline frames`' loop: each record of a source through the selection to its line.
/// Generic over the source so that `FramesCommand` can read a pcap through the concrete
/// `PcapRecordSource` (a specialized, direct `next()`), and everything else through
/// `any RecordSource`.
struct FramePrinter {
    let json: Bool
    let all: Bool
    let showPayload: Bool
    let maxChars: Int
    /// Flush after every record (`--follow`: lines appear as the proxy writes them).
    let follow: Bool
    /// The fleet of a `--merge` read, whose lines name their connection's replica.
    let fleet: MergedRecordSource?
    /// The longest replica name (text lines pad the name to it).
    let width: Int
    private(set) var notes = StreamNotes()
    private(set) var inventory = InputInventory()
    private var output = BufferedOutput()

    init(json: Bool, all: Bool, showPayload: Bool, maxChars: Int, follow: Bool, fleet: MergedRecordSource?, width: Int) {
        self.json = json
        self.all = all
        self.showPayload = showPayload
        self.maxChars = maxChars
        self.follow = follow
        self.fleet = fleet
        self.width = width
    }

    /// Prints the chosen records of `source` to its end; on an error, what was printed so far
    /// goes out first.
    mutating func printAll<Source: RecordSource>(from source: inout Source, selection: inout FrameSelection) throws {
        defer { output.flush() }
        while let record = try source.next() {
            inventory.observe(record)
            // A stream error (a frame length of 2^63, a hole, a conflict) is where frames
            // went missing: said on standard error as it happens.
            if case .note(let note) = record, let line = notes.take(note) {
                output.flush()
                Console.err(TerminalText.escape("faultline: \(line)") + "\n")
            }
            // Moved, not copied, down to the line: a record copy (and its destroy) is a
            // retain and release of each of its references.
            selection.select(consume record, all: all) { printRecord($0) }
            if follow { output.flush() }
        }
    }

    private mutating func printRecord(_ chosen: consuming CaptureRecord) {
        // A fleet's line names its connection's replica: first in text, a member in JSON.
        let replica = fleet.flatMap { fleet in chosen.connection.flatMap(fleet.replica(of:)).map { fleet.replicas[$0] } }
        if let replica, !json { output.write(Array(TerminalText.escape(replica.padding(toLength: width, withPad: " ", startingAt: 0) + "  ").utf8)) }
        switch consume chosen {
        case .frame(let frame):
            if json {
                if showPayload {
                    FramesCommand.payloadJSON(frame, maxChars: maxChars, into: &output)
                } else {
                    FrameLine.json(frame, into: &output)
                }
            } else {
                FrameLine.text(frame, into: &output)
                if showPayload { output.write(Array(RecordLine.payloadText(frame, maxChars: maxChars).utf8)) }
            }
        case let other:
            if let line = json ? RecordLine.json(other) : RecordLine.text(other) { output.write(Array(line.utf8)) }
        }
        if let replica, json { FramesCommand.addReplica(replica, into: &output) }
    }
}
