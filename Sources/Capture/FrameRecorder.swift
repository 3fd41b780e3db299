import Vocabulary
import WebSocket

/// One direction of a WebSocket byte stream turned into frame records: the one recorder
/// behind both the proxy's relay (`RelaySession+Frames`) and the pcap reader
/// (`WebSocketConnection`), so the two cannot drift. It owns, for its direction:
/// - the `FrameDecoder` (frame headers read by `FrameHeader.parse`, the one header parser;
///   its one-step path for whole frames stays inside it);
/// - the `MessageValidator` (message rules, UTF-8 of text messages across fragments), plus
///   the non-minimal length the decoder reports;
/// - the reassembly of compressed messages (`CompressedMessage`, bounded by the one limit
///   `maxPayload`) and their inflation (`MessageInflater`, output bounded by `maxPayload`,
///   of which `maxRecordedMessage` bytes are kept);
/// - the notes for what it could not do, worded the same for both callers.
///
/// A message that could not be inflated (over the limit, or rejected by zlib) is recorded
/// as sent. Its bytes never reached the LZ77 window the sender's later messages refer to,
/// so with context takeover inflation stops for the direction (inflating on would give
/// wrong bytes, silently); with no context takeover each message stands alone and
/// inflation goes on.
///
/// A frame's hops from the socket to its capture line in the proxy (six):
/// 1. `TCPConnection.didRead` (Transport): libuv's read callback hands the bytes read to
///    `RelayPair`'s `onRead`.
/// 2. `RelaySession.handle(.received)` → `receiveFrames` → `FrameRecorder.append` →
///    `FrameDecoder.append`: whole frames are cut straight out of the read (one copy of the
///    payload, unmasked in place); only a partial tail is buffered.
/// 3. `FrameRecorder.next`: the frame out of the decoder, judged by `MessageValidator`,
///    inflated if it ends a compressed message, and made into a `FrameRecord` that shares
///    the frame's payload array (no copy).
/// 4. `RelaySession.relay`: the text message's event is decoded once by the protocol
///    table's entry (`RelayConfig.wire`) into `FrameRecord.decoded`; the faults judge the
///    frame by it, it is re-encoded for the other side, and `.send` and `.record`
///    commands go to the shell.
/// 5. `RelayPair.perform(.record)` → `ProxyServer.record`: counters, watchers, the live
///    view and live analysis, which read the record's event.
/// 6. `CaptureWriter.append` → `RecordEncoding.encode`: the record's line (payload as JSON
///    text or base64) into the writer's buffer, written to the file in batches.
/// The pcap reader takes hops 2 and 3 (`WebSocketConnection.feed`, `drainFrames`) after
/// TCP reassembly, then queues the record (`RecordQueue`) for `frames` or `analyze`.
/// The payload is cut out as a frame once (hop 2) and its event decoded once (hop 4);
/// nothing after that parses it again.
public struct FrameRecorder {
    /// A decoded frame, its record, and the rule it broke if any (the record holds the
    /// rule's text; a strict relay answers with its close code).
    public struct Recorded {
        public var frame: Frame
        public var record: FrameRecord
        public var violation: WebSocketError?
    }

    public struct Limits: Sendable {
        /// The one limit: largest frame payload, largest compressed message gathered for
        /// inflation, largest inflated message.
        public var maxPayload: Int
        /// Of an inflated message, the bytes recorded (the rest is inflated, to keep the
        /// window in step, and dropped); `Int.max`: all of it.
        public var maxRecordedMessage: Int

        public init(maxPayload: Int = FrameDecoder.defaultMaxPayload, maxRecordedMessage: Int = .max) {
            self.maxPayload = maxPayload
            self.maxRecordedMessage = maxRecordedMessage
        }
    }

    /// The direction's sender (a pcap reader learns it after the first bytes).
    public var sender: Side
    public let limits: Limits
    /// Public for the proxy's pass-through of large frames (`beginPassThrough`).
    public var decoder: FrameDecoder
    /// Message rules for this direction; nil judges nothing (a capture picked up mid-way
    /// before the roles were proven).
    public var validator: MessageValidator?
    private var inflater: MessageInflater?
    /// Messages of this direction stand alone (no context takeover): losing one does not
    /// spoil the next.
    private var messagesStandAlone = false
    private var message: CompressedMessage
    /// A message was cut to `maxRecordedMessage` (noted once per direction).
    private var cutNoted = false

    public init(sender: Side, limits: Limits, validator: MessageValidator? = nil) {
        self.sender = sender
        self.limits = limits
        self.validator = validator
        decoder = FrameDecoder(maxPayload: limits.maxPayload)
        message = CompressedMessage(maxBytes: limits.maxPayload)
    }

    /// Whether compressed messages are being inflated.
    public var inflates: Bool { inflater != nil }

    /// The upgrade's agreed extensions: message rules allow RSV1 when permessage-deflate was
    /// agreed, and compressed messages are inflated with the sender's window.
    public mutating func negotiated(_ deflate: DeflateParameters?) {
        validator = MessageValidator(rsv1Allowed: deflate != nil, expectMasked: sender == .client)
        guard let deflate else { inflater = nil; return }
        let client = sender == .client
        let standAlone = client ? deflate.clientNoContextTakeover : deflate.serverNoContextTakeover
        inflater = MessageInflater(windowBits: client ? deflate.clientMaxWindowBits : deflate.serverMaxWindowBits,
                                   noContextTakeover: standAlone)
        messagesStandAlone = standAlone
    }

    /// Starts decoding afresh at a frame boundary (after bytes were skipped): a new decoder
    /// and no message in progress.
    public mutating func restartDecoding() {
        decoder = FrameDecoder(maxPayload: limits.maxPayload)
        message = CompressedMessage(maxBytes: limits.maxPayload)
    }

    /// Drops everything buffered (a connection no longer decoded).
    public mutating func release() {
        decoder = FrameDecoder(maxPayload: 0)
        message = CompressedMessage(maxBytes: limits.maxPayload)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) { decoder.append(bytes) }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 { decoder.append(bytes) }

    /// The next whole frame and its record, or nil when more bytes are needed. Notes about
    /// the frame (inflation given up, a cut message) are added to `notes`, to be written
    /// before the record. Throws what the decoder cannot decode at all.
    /// - Parameter subject: how notes name the sender ("client", "client stream A -> B").
    public mutating func next(conn: ConnectionID, t: Micros, action: FrameAction, subject: @autoclosure () -> String,
                              notes: inout [NoteRecord]) throws(WebSocketError) -> Recorded? {
        guard let frame = try decoder.next() else { return nil }
        let violation = verdict(frame)
        let record = record(frame, violation: violation?.message, conn: conn, t: t, action: action, subject: subject(),
                            notes: &notes)
        return Recorded(frame: frame, record: record, violation: violation)
    }

    /// `next`'s record alone, for a reader that keeps neither the frame nor the rule it
    /// broke (the pcap reader): no `Recorded` to build, copy the record out of and destroy,
    /// once per frame.
    public mutating func nextRecord(conn: ConnectionID, t: Micros, action: FrameAction, subject: @autoclosure () -> String,
                                    notes: inout [NoteRecord]) throws(WebSocketError) -> FrameRecord? {
        guard let frame = try decoder.next() else { return nil }
        return record(frame, violation: verdict(frame)?.message, conn: conn, t: t, action: action, subject: subject(),
                      notes: &notes)
    }

    /// The rule `frame` broke, if any: the validator's, or the decoder's length encoding.
    private mutating func verdict(_ frame: Frame) -> WebSocketError? {
        if let violation = validator?.validate(frame) { return violation }
        guard decoder.lastFrameHadNonMinimalLength else { return nil }
        return WebSocketError(.nonMinimalLength, "payload length not in its minimal encoding", closeCode: .protocolError)
    }

    /// `frame`'s record: its header, its verdict, its payload (inflated when it ends a
    /// compressed message; empty for the earlier frames of one).
    private mutating func record(_ frame: Frame, violation: String?, conn: ConnectionID, t: Micros, action: FrameAction,
                                 subject: @autoclosure () -> String, notes: inout [NoteRecord]) -> FrameRecord {
        guard let inflater, !frame.opcode.isControl else {
            // Built straight into the result: through the `var` below, the record was copied
            // out and destroyed once more per frame.
            return Self.plainRecord(frame, violation: violation, conn: conn, t: t, from: sender, action: action)
        }
        var record = Self.plainRecord(frame, violation: violation, conn: conn, t: t, from: sender, action: action)
        switch message.add(opcode: frame.opcode, rsv1: frame.rsv1, fin: frame.fin, payload: frame.payload) {
        case .notCompressed:
            break
        case .tooLarge:
            messageLost("compressed message from the \(subject()) over \(limits.maxPayload) bytes", conn: conn, t: t,
                        notes: &notes)
        case .partial:
            // The whole message is recorded inflated on its last frame.
            record.compressed = true
            record.payload = []
        case .complete(let whole):
            do {
                let keep = limits.maxRecordedMessage
                let (prefix, length) = try inflater.inflatePrefix(whole, keep: keep, maxOutput: limits.maxPayload)
                record.compressed = true
                record.payload = prefix
                if length > keep, !cutNoted {
                    // The analyzer needs a message's first kilobytes, not 64 MiB of it (an
                    // inflation bomb stays small); the cut is noted once.
                    cutNoted = true
                    notes.append(NoteRecord(conn: conn, t: t, level: .warning, message: "\(subject()): a message inflated to \(length) bytes; of this and any later message over \(keep) bytes only the first \(keep) are recorded"))
                }
            } catch {
                messageLost("could not inflate a compressed message from the \(subject()): \(error)", conn: conn, t: t,
                            notes: &notes)
            }
        }
        return record
    }

    /// `frame`'s record as it came (not inflated).
    @inline(__always)
    private static func plainRecord(_ frame: Frame, violation: String?, conn: ConnectionID, t: Micros, from sender: Side,
                                    action: FrameAction) -> FrameRecord {
        FrameRecord(conn: conn, t: t, from: sender, opcode: frame.opcode, fin: frame.fin, rsv1: frame.rsv1, rsv2: frame.rsv2,
                    rsv3: frame.rsv3, masked: frame.isMasked, length: frame.payload.count, payload: frame.payload,
                    action: action, protocolError: violation)
    }

    /// A frame that is passed on without ever being whole here (the proxy's large frames):
    /// its header's verdict, and its message is given up for inflation.
    public mutating func passingThrough(_ header: Frame, length: Int, conn: ConnectionID, t: Micros,
                                        subject: @autoclosure () -> String, notes: inout [NoteRecord]) -> String? {
        let violation = validator?.validate(header)?.message
        if inflater != nil, !header.opcode.isControl, header.rsv1 || message.isCompressed {
            message = CompressedMessage(maxBytes: limits.maxPayload)
            messageLost("a \(length)-byte frame from the \(subject()) was passed through without being kept whole", conn: conn,
                        t: t, notes: &notes)
        }
        return violation
    }

    /// A compressed message was not inflated: recorded as sent; with context takeover the
    /// window is lost with it, so inflation stops for this direction.
    private mutating func messageLost(_ what: String, conn: ConnectionID, t: Micros, notes: inout [NoteRecord]) {
        if messagesStandAlone {
            notes.append(NoteRecord(conn: conn, t: t, level: .warning, message: "\(what); recorded as sent (messages stand alone: later ones are inflated)"))
        } else {
            inflater = nil
            notes.append(NoteRecord(conn: conn, t: t, level: .warning, message: "\(what); recorded as sent, inflation off for this direction"))
        }
    }
}
