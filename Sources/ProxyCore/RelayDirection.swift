import Capture
import Vocabulary
import WebSocket

/// The state of one direction of a relayed pair, named by its sender.
struct RelayDirection {
    let sender: Side
    /// Bytes to frames and records (decoding, message rules, inflation): the same
    /// recorder as the pcap reader's.
    var recorder: FrameRecorder
    /// The sender's close frame was relayed.
    var closeRelayed = false
    /// The sender's stream ended (FIN, RST or error).
    var readEnded = false
    /// The large frame being passed through as it arrives, if any.
    var passThrough: PassThroughFrame?
    /// Budget held for the large frame being gathered whole for a fault, if any.
    var gathering: LargeFrameBudget.Reservation?
    /// Frames held back by a latency fault, in order, to be sent to `sender.other`.
    var delayed: [DelayedFrame] = []
    /// Bytes in `delayed`, and whether the sender is paused because of them.
    var delayedBytes = 0
    var pausedByDelay = false
    /// The first pause was noted (once per direction, not once per pause).
    var delayNoted = false
    /// Half-close the receiver once `delayed` drains (the sender sent FIN meanwhile).
    var shutdownAfterQueue = false

    init(sender: Side, maxPayload: Int) {
        self.sender = sender
        recorder = FrameRecorder(sender: sender, limits: FrameRecorder.Limits(maxPayload: maxPayload),
                                 validator: MessageValidator(rsv1Allowed: false, expectMasked: sender == .client))
    }
}

/// A frame waiting for its release time, with the record to write when it is sent. A
/// piece of a sliced frame carries no record (its last piece does); a held-back FIN is an
/// entry with no bytes and no record, followed by `shutdownAfterQueue`.
struct DelayedFrame {
    var releaseAt: Micros
    var receivedAt: Micros
    var bytes: [UInt8]
    var record: FrameRecord?
    var isClose: Bool
}
