import Capture
import Testing
@testable import Lifecycle

/// A frame is nearly every record, and its record and step are moved from the reader
/// through the router to its client's timeline several times: their sizes are budgets
/// (docs/benchmarks.md, "Issue 31, ninth round": a record of 168 bytes and a step of 251,
/// the largest rare case's size, were a twelfth of the analysis's time in memmove). A
/// field added to a frame, or a large case added to either enum without boxing it, fails
/// here rather than slowing every record unseen.
@Suite struct StepSizeTests {
    @Test func aFrameRecordFitsInSixtyFourBytes() {
        #expect(MemoryLayout<FrameRecord>.size <= 64)
    }

    @Test func aRecordIsNoLargerThanItsFrame() {
        // The frame's payload plus the enum's tag: every larger case is boxed.
        #expect(MemoryLayout<CaptureRecord>.size <= MemoryLayout<FrameRecord>.size + 1)
    }

    @Test func aStepIsNoLargerThanAFramesStep() {
        // A client number, the frame and its small event (`FrameEvent`), plus the tag.
        let frameStep = MemoryLayout<(Int, FrameRecord, FrameEvent)>.size
        #expect(MemoryLayout<RoutedStep>.size <= frameStep + 1)
        #expect(MemoryLayout<FrameEvent>.size <= 17)
    }
}
