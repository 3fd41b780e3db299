import CLI
import Capture
import Lifecycle
import Vocabulary

/// Which records `faultline frames` prints: the `--conn`, `--client`, `--from` and
/// `--event` filters, decided per record. `--client` uses the analyzer's own grouping (the
/// ids `analyze` reports, `ClientGrouping`): no client timeline is built (what made
/// `frames --client` grow to gigabytes on a million connections, when it ran the whole
/// analyzer); the others are plain tests.
package struct FrameSelection {
    package var connections: Set<ConnectionID>?
    package var client: String?
    package var from: Side?
    package var event: String?
    /// Connection -> client id, from the analyzer's grouping (only with `--client`).
    private var grouping: ClientGrouping?
    private var clientOf: [ConnectionID: String] = [:]
    /// Opens of connections not yet grouped (grouping waits for the upgrade request), kept
    /// to be printed once their client is known; bounded like the analyzer's own.
    private(set) var pendingOpens: [ConnectionID: CaptureRecord] = [:]
    package static let maxPendingOpens = 10_000

    package init(_ arguments: ParsedArguments) throws(UsageError) {
        let command = "faultline frames"
        var conns: Set<ConnectionID> = []
        for text in arguments.all("conn") {
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { Int($0) }
                guard let low = bounds.first ?? nil, low >= 0, let high = bounds.count == 2 ? bounds[1] : low,
                      high >= low, high - low <= 1_000_000 else {
                    throw UsageError("\(command): invalid value '\(text)' for '--conn': expected connection numbers such as 3, 1,4 or 2-5")
                }
                for c in low...high { conns.insert(c) }
            }
        }
        connections = conns.isEmpty ? nil : conns
        if let side = arguments.value("from") { from = side == "client" ? .client : .server }
        event = arguments.value("event")
        client = arguments.value("client")
        if client != nil {
            do { grouping = try ClientGrouping() } catch {
                throw UsageError("\(command): --client: \(error)")
            }
        }
    }

    /// Hands `print` the records to print for this one, in order (an open held back until
    /// its client is known comes out just before the record that revealed it). A closure,
    /// not an array: `frames` asks this once per record, and an array of chosen records
    /// was a heap block and a record copy each time.
    /// The record is handed on, not copied: `frames` takes each record apart to print it.
    package mutating func select(_ record: consuming CaptureRecord, all: Bool, _ print: (consuming CaptureRecord) -> Void) {
        // Only `--client` groups (tested first: binding the optional grouping copied it).
        if client != nil, group(record, all: all, print) { return }
        if case .frame = record {} else if !all { return }
        // No filter (what `frames FILE` runs): every frame goes out without being taken
        // apart; `matches` copies the frame out of the record (its payload retained and
        // released) three times.
        if connections == nil, client == nil, from == nil, event == nil {
            if case .header = record { return }
            print(record)
            return
        }
        if matches(record) { print(record) }
    }

    /// `--client`: routes the record through the grouping, printing the held opens of the
    /// connections it grouped; true when the record is an open held back.
    private mutating func group(_ record: CaptureRecord, all: Bool, _ print: (consuming CaptureRecord) -> Void) -> Bool {
        guard var grouping else { return false }
        self.grouping = nil   // held alone while it routes (no copy)
        var grouped: [(conn: ConnectionID, id: String)] = []
        grouping.observe(record) { grouped.append(($0, $1.id)) }
        self.grouping = grouping
        for (conn, id) in grouped {
            clientOf[conn] = id
            if let open = pendingOpens.removeValue(forKey: conn), id == client, all, matches(open) { print(open) }
        }
        if case .open(let open) = record, clientOf[open.conn] == nil {
            if pendingOpens.count < Self.maxPendingOpens { pendingOpens[open.conn] = record }
            return true
        }
        return false
    }

    /// `--event`'s test (also the web UI's `event:` filter): the whole name, or its part
    /// after the last ':' ("subscribe" for "bird:subscribe").
    package static func event(_ name: String, matches wanted: String) -> Bool {
        name == wanted || name.split(separator: ":").last.map(String.init) == wanted
    }

    private func matches(_ record: CaptureRecord) -> Bool {
        if case .header = record { return false }
        let conn = record.connection
        if let connections {
            guard let conn, connections.contains(conn) else { return false }
        }
        if let client {
            guard let conn, clientOf[conn] == client else { return false }
        }
        switch record {
        case .frame(let frame):
            if let from, frame.from != from { return false }
            if let event {
                guard let name = FrameLine.eventName(frame) else { return false }
                return Self.event(name, matches: event)
            }
            return true
        case .upgrade(let upgrade):
            if let from, upgrade.from != from { return false }
            return event == nil
        default:
            // Opens, ends, notes and faults belong to no event; --from keeps them (they
            // concern both sides) unless an event is asked for.
            return event == nil
        }
    }
}
