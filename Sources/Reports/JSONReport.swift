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

    /// The same text as serializing `value(report)`, but the three large arrays (clients,
    /// transitions, findings) are written element by element, so they never exist as one
    /// tree of values: a large report needs a fraction of the memory.
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
                writeArray(clients.indices.lazy.flatMap { clients.transitions(at: $0).lazy.map { transition($0, start) } }, into: &out, emit: emit)
            case "findings": writeArray(report.findings.lazy.map { finding($0, start) }, into: &out, emit: emit)
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
        out.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.write(element, into: &out)
            if out.count >= 1 << 16 {
                emit(String(decoding: out, as: UTF8.self))
                out.removeAll(keepingCapacity: true)
            }
        }
        out.append(UInt8(ascii: "]"))
    }

    public static func value(_ report: AnalysisReport) -> JSONValue {
        var root = skeleton(report)
        let start = report.startedAt
        root["grouping"] = .object(["key": .string(report.grouping), "clients": .array(report.clients.map { groupingEntry($0, replicas: report.replicas) })])
        root["clients"] = .array(report.clients.map { client($0, start, replicas: report.replicas) })
        root["transitions"] = .array(report.clients.flatMap { $0.transitions.map { transition($0, start) } })
        root["findings"] = .array(report.findings.map { finding($0, start) })
        return .object(root)
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
    /// (in their places, so the key order is the schema's).
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
        // Filled by `value`, streamed by `render`.
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

    static func transition(_ t: Transition, _ start: Int64?) -> JSONValue {
        .object([
            "client": .string(t.client),
            "conn": t.conn.map { .int(Int64($0)) } ?? .null,
            "t": time(t.t),
            "at": iso(t.t, start),
            "from": t.from.map { .string($0) } ?? .null,
            "to": .string(t.to),
            "cause": .string(t.cause),
        ])
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

    static func finding(_ f: Finding, _ start: Int64?) -> JSONValue {
        .object([
            "rule": .string(f.rule),
            "severity": .string(f.severity.rawValue),
            "party": .string(f.party.rawValue),
            "client": .string(f.client),
            "conn": .int(Int64(f.conn)),
            "t": time(f.t),
            "at": iso(f.t, start),
            "message": .string(f.message),
            "caused_by_fault": f.causedByFault.map { .string($0) } ?? .null,
            "after_fault": f.afterFault.map { .string($0) } ?? .null,
            "evidence": .array(f.evidence.map { e in
                .object(["conn": .int(Int64(e.conn)), "t": time(e.t),
                         "from": e.from.map { .string($0.rawValue) } ?? .null, "summary": .string(e.summary)])
            }),
        ])
    }
}
