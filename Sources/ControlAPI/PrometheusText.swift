import Faults

/// `GET /metrics` in the Prometheus text exposition format (version 0.0.4): `# HELP` and
/// `# TYPE` lines, then one sample a line. Every fault kind gets a series, at 0 until it
/// fires, so dashboards and `rate()` see it from the start. A named replica
/// (`proxy --replica`) labels every sample `replica="NAME"`.
enum PrometheusText {
    static func render(_ m: ControlMetrics, engine: FaultEngine) -> String {
        var out = ""
        let replica = m.replica.map { "replica=\"\(escape($0))\"" }
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Int)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples {
                let labels = [replica, sample.labels.isEmpty ? nil : sample.labels].compactMap { $0 }.joined(separator: ",")
                out += labels.isEmpty ? "\(name) \(sample.value)\n" : "\(name){\(labels)} \(sample.value)\n"
            }
        }
        family("faultline_connections_open", "gauge", "Client connections open now.", [("", m.connectionsOpen)])
        family("faultline_connections_total", "counter", "Client connections accepted since the proxy started.",
               [("", m.connectionsTotal)])
        family("faultline_frames_total", "counter", "Frames relayed, by direction (c2s: client to server).",
               [("direction=\"c2s\"", m.framesClientToServer), ("direction=\"s2c\"", m.framesServerToClient)])
        family("faultline_bytes_total", "counter", "Frame payload bytes relayed, by direction.",
               [("direction=\"c2s\"", m.bytesClientToServer), ("direction=\"s2c\"", m.bytesServerToClient)])
        family("faultline_frames_dropped_total", "counter", "Frames a fault swallowed.", [("", m.framesDropped)])
        family("faultline_frames_delayed_total", "counter", "Frames a fault delayed.", [("", m.framesDelayed)])
        family("faultline_frames_injected_total", "counter", "Frames a fault made up and sent.", [("", m.framesInjected)])
        let fired = engine.firedByKind
        let kinds = Set(FaultRegistry.names).union(fired.keys).sorted()
        family("faultline_faults_fired_total", "counter", "Faults fired, by kind.",
               kinds.map { ("kind=\"\(escape($0))\"", fired[$0] ?? 0) })
        family("faultline_rules", "gauge", "Fault rules installed now.", [("", engine.list().count)])
        return out
    }

    /// A label value with backslash, quote and newline escaped, as the format requires.
    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
