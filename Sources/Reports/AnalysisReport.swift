import Capture
import Lifecycle

/// Everything a report shows, gathered from the analyzer's events. The engine streams;
/// a report needs the whole picture, so this is where events are kept.
public struct AnalysisReport: Sendable {
    public struct Client: Sendable {
        public var info: ClientInfo
        public var connections: [ConnectionSummary] = []
        public var transitions: [Transition] = []
        public var faults: [FaultMark] = []
        public var findings: [Finding] = []
        /// Connection ids in the order they were grouped under this client.
        public var connectionIDs: [ConnectionID] = []
    }

    public var spec: LifecycleSpec
    public var inputs: [String]
    /// How connections were grouped into clients, for every report.
    public var grouping: String
    public var prefix: String?
    public var clients: [Client]
    /// All findings in the order found.
    public var findings: [Finding]
    /// Problems met reading the input that did not stop it.
    public var warnings: [String]
    /// The last record time: the right edge of timelines.
    public var endTime: Micros

    public var errorCount: Int { findings.filter { $0.severity == .error }.count }
    public var warningCount: Int { findings.filter { $0.severity == .warning }.count }
    public var connectionCount: Int { clients.reduce(0) { $0 + $1.connectionIDs.count } }
    /// 0 with no error finding, 1 with one (spec section 5).
    public var exitStatus: Int32 { errorCount > 0 ? 1 : 0 }

    /// "2 clients, 5 connections: 1 error, 0 warnings".
    public var summaryLine: String {
        "\(clients.count) client\(clients.count == 1 ? "" : "s"), \(connectionCount) connection\(connectionCount == 1 ? "" : "s"): "
            + "\(errorCount) error\(errorCount == 1 ? "" : "s"), \(warningCount) warning\(warningCount == 1 ? "" : "s")"
    }
}

/// Collects analyzer events into a report.
public struct ReportBuilder: Sendable {
    private var clients: [AnalysisReport.Client] = []
    private var index: [String: Int] = [:]
    private var findings: [Finding] = []
    private var endTime: Micros = 0

    public init() {}

    public mutating func add(_ events: [AnalysisEvent]) {
        for event in events { add(event) }
    }

    public mutating func add(_ event: AnalysisEvent) {
        switch event {
        case .client(let info):
            index[info.id] = clients.count
            clients.append(AnalysisReport.Client(info: info))
            endTime = max(endTime, info.firstSeen)
        case .connection(let conn, let client):
            if let i = index[client] { clients[i].connectionIDs.append(conn) }
        case .transition(let t):
            if let i = index[t.client] { clients[i].transitions.append(t) }
            endTime = max(endTime, t.t)
        case .finding(let f):
            findings.append(f)
            if let i = index[f.client] { clients[i].findings.append(f) }
            endTime = max(endTime, f.t)
        case .connectionEnded(let s):
            if let i = index[s.client] { clients[i].connections.append(s) }
            endTime = max(endTime, s.endedAt ?? s.openedAt)
        case .fault(let mark):
            if let i = index[mark.client] { clients[i].faults.append(mark) }
            endTime = max(endTime, mark.t)
        }
    }

    public func build(spec: LifecycleSpec, inputs: [String], grouping: String, prefix: String?,
                      warnings: [String] = [], endTime: Micros? = nil) -> AnalysisReport {
        var clients = self.clients
        for i in clients.indices { clients[i].connections.sort { $0.conn < $1.conn } }
        return AnalysisReport(spec: spec, inputs: inputs, grouping: grouping, prefix: prefix, clients: clients,
                              findings: findings, warnings: warnings, endTime: max(self.endTime, endTime ?? 0))
    }
}

/// Report output formats.
public enum ReportFormat: String, Sendable, CaseIterable {
    case text, json, junit, html

    public func render(_ report: AnalysisReport) -> String {
        switch self {
        case .text: TextReport.render(report)
        case .json: JSONReport.render(report)
        case .junit: JUnitReport.render(report)
        case .html: HTMLReport.render(report)
        }
    }
}

/// Seconds with three decimals: "14.200".
func seconds(_ t: Micros) -> String {
    let ms = (Double(t) / 1000).rounded()
    let whole = Int64(ms / 1000)
    let frac = Int64(abs(ms)) % 1000
    let pad = frac < 10 ? "00" : frac < 100 ? "0" : ""
    return "\(t < 0 && whole == 0 ? "-" : "")\(whole).\(pad)\(frac)"
}

/// Escapes text for XML and HTML attributes and content.
func escapeXML(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default:
            // XML 1.0 forbids most control characters even as references.
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r" {
                out += "?"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}
