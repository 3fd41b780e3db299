import Lifecycle
import Vocabulary

extension HTMLReport {
    /// One client's swim lane as a standalone SVG document, the report's own drawing
    /// (`HTMLLane`) with the report's stylesheet inside: the web UI shows it as an image,
    /// where no script runs and no link is followed, so the lane stays inert whatever the
    /// capture holds. `end` is the lane's time axis end (the live session's now).
    package static func laneImage(_ client: AnalysisReport.Client, spec: LifecycleSpec, end: Micros) -> String {
        let lane = HTMLLane(client: client, spec: spec, end: end, groupOf: client.findings.indices.map { $0 + 1 }).render()
        guard let headEnd = lane.firstIndex(of: "\n") else { return lane }
        return String(lane[...headEnd]) + "<style>\(HTMLAssets.style)</style>\n" + lane[lane.index(after: headEnd)...]
    }
}
