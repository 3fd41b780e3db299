import Capture
import Lifecycle

/// The bird spec, loaded once for the targets that run the analyzer.
let birdSpec: LifecycleSpec = {
    do { return try SpecLoader.load("bird") } catch { fatalError("bird spec: \(error)") }
}()

extension FuzzTarget {
    /// A capture's lines, decoded, through the analyzer with the bird spec: the session
    /// rules see records in any order, with any times, events and close codes.
    static let captureAnalyzer = FuzzTarget(
        name: "capture-analyzer",
        summary: "capture lines decoded and run through LiveAnalyzer (bird spec) to the report") { input in
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: birdSpec))
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true) {
            guard let record = try? RecordCoding.decode(Array(line)) else { continue }
            _ = analyzer.feed(record)
        }
        _ = analyzer.finish(at: nil)
    }
}
