import Capture
import JSON
import Lifecycle
import Vocabulary

/// The JSON report; schema documented in docs/report-json.md (format "faultline-analysis",
/// version 1). Times are seconds since the capture's start, as numbers (`t`), with the
/// absolute time beside them (`at`, ISO 8601 UTC) when the capture header gives its start.
public enum JSONReport {
    public static let format = "faultline-analysis"
    public static let version: Int64 = 1

    /// The report's text. The three large arrays (clients, transitions, findings) are written
    /// element by element, so they never exist as one tree of values (a large report needs
    /// a fraction of the memory), and each transition and finding member by member with no
    /// tree at all (`writeTransition`, `writeFinding`).
    public static func render(_ report: AnalysisReport) -> String {
        var all = ""
        render(report) { all += $0 }
        return all
    }

    /// The same text in pieces of about 64 KiB, so a large report is never held whole.
    public static func render(_ report: AnalysisReport, emit: (String) -> Void) {
        let start = report.startedAt
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(1 << 17)
        for (i, member) in skeleton(report).members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            switch member.key {
            case "clients": writeArray(report.clients.lazy.map { client($0, start, replicas: report.replicas) }, into: &out, emit: emit)
            // The clients are kept densely and made whole when read (`ReportClients`): the
            // passes that show one part of them make only that part.
            case "transitions":
                let clients = report.clients
                writeArray(clients.indices.lazy.flatMap { clients.transitions(at: $0) }, into: &out, emit: emit) {
                    writeTransition($0, start, into: &$1)
                }
            case "findings": writeArray(report.findings, into: &out, emit: emit) { writeFinding($0, start, into: &$1) }
            case "grouping":
                // An object with one array per client: streamed like the three above.
                out.append(contentsOf: #"{"key":"#.utf8)
                JSONWriter.write(.string(report.grouping), into: &out)
                out.append(contentsOf: #","clients":"#.utf8)
                writeArray(report.clients.withoutLists.map { groupingEntry($0, replicas: report.replicas) }, into: &out, emit: emit)
                out.append(UInt8(ascii: "}"))
            default: JSONWriter.write(member.value, into: &out)
            }
        }
        out.append(contentsOf: "}\n".utf8)
        emit(String(decoding: out, as: UTF8.self))
    }

    private static func writeArray(_ elements: some Sequence<JSONValue>, into out: inout [UInt8], emit: (String) -> Void) {
        writeArray(elements, into: &out, emit: emit) { JSONWriter.write($0, into: &$1) }
    }

    /// `elements` as a JSON array, each written by `write`, handed to `emit` in pieces of
    /// about 64 KiB.
    private static func writeArray<Element>(_ elements: some Sequence<Element>, into out: inout [UInt8],
                                            emit: (String) -> Void, write: (Element, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            write(element, &out)
            if out.count >= 1 << 16 {
                emit(String(decoding: out, as: UTF8.self))
                out.removeAll(keepingCapacity: true)
            }
        }
        out.append(UInt8(ascii: "]"))
    }

    /// One client's entry in `grouping.clients`.
    static func groupingEntry(_ c: AnalysisReport.Client, replicas: [ConnectionID: String]) -> JSONValue {
        var entry: JSONObject = ["id": .string(c.info.id), "key": .string(c.info.key),
                                 "connections": .array(c.connectionIDs.map { .int(Int64($0)) })]
        // A fleet's report only: each connection's replica, in the order of `connections`.
        if !replicas.isEmpty { entry["replicas"] = .array(c.connectionIDs.map { replicas[$0].map { .string($0) } ?? .null }) }
        return .object(entry)
    }

    /// The report object with `grouping`, `clients`, `transitions` and `findings` as null placeholders
    /// (in their places, so the key order is the schema's), which `render` writes in turn.
    static func skeleton(_ report: AnalysisReport) -> JSONObject {
        var root = JSONObject()
        root["format"] = .string(format)
        root["version"] = .int(version)
        root["spec"] = .string(report.spec.name)
        // Only when several specs judged the clients (each its own pack's).
        if !report.specsUsed.isEmpty {
            root["specs"] = .array(report.specsUsed.map { .object(["spec": .string($0.spec.name), "clients": .int(Int64($0.clients))]) })
        }
        root["inputs"] = .array(report.inputs.map { .string($0) })
        root["started_at"] = iso(0, report.startedAt)
        root["prefix"] = report.prefix.map { .string($0) } ?? .null
        root["warnings"] = .array(report.warnings.map { .string($0) })
        // Streamed by `render`.
        root["grouping"] = .null
        root["clients"] = .null
        root["transitions"] = .null
        root["findings"] = .null
        root["undetermined"] = .array(report.undetermined.map { undetermined($0, report.startedAt) })
        root["not_checked"] = .array(report.unchecked.map { .object(["rule": .string($0.rule), "reason": .string($0.reason)]) })
        root["summary"] = .object([
            "clients": .int(Int64(report.clients.count)),
            "connections": .int(Int64(report.connectionCount)),
            "findings": .int(Int64(report.findingCount)),
            "errors": .int(Int64(report.errorCount)),
            "warnings": .int(Int64(report.warningCount)),
            "undetermined": .int(Int64(report.undetermined.count)),
            "end": time(report.endTime),
            "fail_on": .string(report.failOn.rawValue),
            "exit_status": .int(Int64(report.exitStatus)),
        ])
        return root
    }

    static func time(_ t: Micros) -> JSONValue { .double(Double(t) / 1_000_000) }
    static func optionalTime(_ t: Micros?) -> JSONValue { t.map(time) ?? .null }
    /// The absolute time in ISO 8601 (UTC), or null when the capture's start is unknown.
    static func iso(_ t: Micros, _ start: Int64?) -> JSONValue {
        start.flatMap { WallClock.iso($0, plus: t) }.map { .string($0) } ?? .null
    }

    static func client(_ c: AnalysisReport.Client, _ start: Int64?, replicas: [ConnectionID: String]) -> JSONValue {
        var object: JSONObject = [
            "id": .string(c.info.id),
            "key": .string(c.info.key),
            "first_seen": time(c.info.firstSeen),
            "state": c.finalState.map { .string($0) } ?? .null,
            "connections": .array(c.connections.map { s in
                var connection: JSONObject = [
                    "conn": .int(Int64(s.conn)),
                    "opened": time(s.openedAt),
                    "connected": optionalTime(s.connectedAt),
                    "ended": optionalTime(s.endedAt),
                    "close_code": s.closeCode.map { .int(Int64($0)) } ?? .null,
                    "closed_by": s.closedBy.map { .string($0.rawValue) } ?? .null,
                    "end": s.end.map { .string($0) } ?? .null,
                ]
                if let replica = replicas[s.conn] { connection["replica"] = .string(replica) }
                return .object(connection)
            }),
            "faults": .array(c.faults.map { f in
                .object(["t": time(f.t), "at": iso(f.t, start), "conn": f.conn.map { .int(Int64($0)) } ?? .null,
                         "rule": .string(f.rule), "detail": .string(f.detail)])
            }),
            "findings": .int(Int64(c.findingCount)),
            "omitted": .object([
                "transitions": .int(Int64(c.omitted.transitions)), "connections": .int(Int64(c.omitted.connections)),
                "faults": .int(Int64(c.omitted.faults)), "findings": .int(Int64(c.omitted.findings)),
            ]),
        ]
        // Only when several specs judged the clients: this one's.
        if let spec = c.spec { object["spec"] = .string(spec) }
        return .object(object)
    }

    /// One transition, `{"client":...,"cause":...}`, written member by member: there are
    /// tens of thousands in a large report, and building each as a tree of values (an
    /// ordered object, hashed) only to write it out was some 2% of `analyze --format
    /// json`. `JSONWriter` writes every value, so the text is what the tree gave.
    static func writeTransition(_ t: Transition, _ start: Int64?, into out: inout [UInt8]) {
        raw(#"{"client":"#, into: &out)
        JSONWriter.writeString(t.client, into: &out)
        raw(#","conn":"#, into: &out)
        JSONWriter.write(t.conn.map { .int(Int64($0)) } ?? .null, into: &out)
        raw(#","t":"#, into: &out)
        JSONWriter.write(time(t.t), into: &out)
        raw(#","at":"#, into: &out)
        JSONWriter.write(iso(t.t, start), into: &out)
        raw(#","from":"#, into: &out)
        JSONWriter.write(t.from.map { .string($0) } ?? .null, into: &out)
        raw(#","to":"#, into: &out)
        JSONWriter.writeString(t.to, into: &out)
        raw(#","cause":"#, into: &out)
        JSONWriter.writeString(t.cause, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// One finding, member by member, as `writeTransition`.
    static func writeFinding(_ f: Finding, _ start: Int64?, into out: inout [UInt8]) {
        raw(#"{"rule":"#, into: &out)
        JSONWriter.writeString(f.rule, into: &out)
        raw(#","severity":"#, into: &out)
        JSONWriter.writeString(f.severity.rawValue, into: &out)
        raw(#","party":"#, into: &out)
        JSONWriter.writeString(f.party.rawValue, into: &out)
        raw(#","client":"#, into: &out)
        JSONWriter.writeString(f.client, into: &out)
        raw(#","conn":"#, into: &out)
        JSONWriter.write(.int(Int64(f.conn)), into: &out)
        raw(#","t":"#, into: &out)
        JSONWriter.write(time(f.t), into: &out)
        raw(#","at":"#, into: &out)
        JSONWriter.write(iso(f.t, start), into: &out)
        raw(#","message":"#, into: &out)
        JSONWriter.writeString(f.message, into: &out)
        raw(#","caused_by_fault":"#, into: &out)
        JSONWriter.write(f.causedByFault.map { .string($0) } ?? .null, into: &out)
        raw(#","after_fault":"#, into: &out)
        JSONWriter.write(f.afterFault.map { .string($0) } ?? .null, into: &out)
        raw(#","evidence":["#, into: &out)
        for (i, e) in f.evidence.enumerated() {
            raw(i == 0 ? #"{"conn":"# : #",{"conn":"#, into: &out)
            JSONWriter.write(.int(Int64(e.conn)), into: &out)
            raw(#","t":"#, into: &out)
            JSONWriter.write(time(e.t), into: &out)
            raw(#","from":"#, into: &out)
            JSONWriter.write(e.from.map { .string($0.rawValue) } ?? .null, into: &out)
            raw(#","summary":"#, into: &out)
            JSONWriter.writeString(e.summary, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        raw("]}", into: &out)
    }

    /// Punctuation and a member's quoted name, which need no escaping (ASCII letters and `_`).
    @inline(__always) private static func raw(_ text: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    static func undetermined(_ u: Undetermined, _ start: Int64?) -> JSONValue {
        .object([
            "rule": .string(u.rule),
            "severity": .string(u.severity.rawValue),
            "party": .string(u.party.rawValue),
            "client": .string(u.client),
            "conn": .int(Int64(u.conn)),
            "t": time(u.t),
            "at": iso(u.t, start),
            "deadline": time(u.deadline),
            "message": .string(u.message),
        ])
    }
}
