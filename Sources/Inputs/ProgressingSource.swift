import CLI
import Capture

/// A record source that ticks a progress line for every record it hands on, for commands
/// whose reading loop lives elsewhere (`export`).
package struct ProgressingSource: RecordSource {
    var inner: any RecordSource
    package let progress: ProgressLine

    package init(_ inner: any RecordSource, _ progress: ProgressLine) {
        self.inner = inner
        self.progress = progress
    }

    package var header: CaptureHeader { inner.header }
    package var warnings: [String] { inner.warnings }

    package mutating func next() throws -> CaptureRecord? {
        progress.tick()
        return try inner.next()
    }
}
