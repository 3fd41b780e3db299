import Capture
import Vocabulary
import WebSocket

/// Capture records made from fuzz input bytes: every record type after the header, every
/// optional key present or absent, any string, any integer the model holds, so that the
/// differential target can require the direct decoder to take each line `encode` writes.
struct FuzzRecords {
    private var bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private mutating func byte() -> UInt8 {
        guard let first = bytes.first else { return 0 }
        bytes = UnsafeRawBufferPointer(rebasing: bytes[1...])
        return first
    }

    private mutating func flag() -> Bool { byte() & 1 == 1 }

    /// Small values mostly, the extremes sometimes.
    private mutating func int() -> Int {
        switch byte() % 8 {
        case 0: return .min
        case 1: return .max
        case 2: return -Int(byte())
        case 3: return Int(Int64(truncatingIfNeeded: (0..<8).reduce(UInt64(0)) { v, _ in v << 8 | UInt64(byte()) }))
        default: return Int(byte()) << Int(byte() % 24)
        }
    }

    /// A record time (within ±`RecordTime.limit`).
    private mutating func time() -> Int64 {
        let t = Int64(int())
        return RecordTime.isValid(t) ? t : t % RecordTime.limit
    }

    private mutating func payload() -> [UInt8] {
        let count = Int(byte() % 24)
        return (0..<count).map { _ in byte() }
    }

    private mutating func string() -> String { String(decoding: payload(), as: UTF8.self) }
    private mutating func optionalString() -> String? { flag() ? string() : nil }
    private mutating func optionalInt() -> Int? { flag() ? int() : nil }
    private mutating func side() -> Side { flag() ? .client : .server }

    private mutating func headers() -> [HeaderField] {
        (0..<Int(byte() % 4)).map { _ in HeaderField(string(), string()) }
    }

    /// The next record, or nil when the input is used up.
    mutating func next() -> CaptureRecord? {
        guard !bytes.isEmpty else { return nil }
        switch byte() % 8 {
        case 0:
            return .open(OpenRecord(conn: int(), t: time(), client: string(), server: string(), upstream: optionalString()))
        case 1:
            return .upgrade(UpgradeRecord(conn: int(), t: time(), from: side(), method: optionalString(),
                                          target: optionalString(), status: optionalInt(), reason: optionalString(),
                                          headers: headers()))
        case 2, 3:
            let actions: [FrameAction] = [.forwarded, .dropped, .delayed(max(0, time())), .injected, .observed]
            let opcode = byte() % 3 == 0 ? Opcode.close : Opcode(rawValue: byte() % 16)
            let payload = payload()
            var frame = FrameRecord(conn: int(), t: time(), from: side(), opcode: opcode, fin: flag(), rsv1: flag(),
                                    rsv2: flag(), rsv3: flag(), masked: flag(), length: flag() ? int() : payload.count,
                                    payload: payload, compressed: flag(), action: actions[Int(byte() % 5)],
                                    protocolError: optionalString(), fault: optionalString())
            frame.sha256 = optionalString()
            return .frame(frame)
        case 4:
            let kinds: [EndKind] = [.fin, .rst, .error, .captureEnd]
            return .end(EndRecord(conn: int(), t: time(), side: side(), kind: kinds[Int(byte() % 4)],
                                  detail: optionalString(), leg: flag() ? nil : (flag() ? .client : .upstream)))
        case 5:
            return .fault(FaultRecord(conn: optionalInt(), t: time(), rule: string(), kind: string(),
                                      target: flag() ? side() : nil, detail: string()))
        case 6:
            let levels: [NoteRecord.Level] = [.info, .warning, .error]
            return .note(NoteRecord(conn: optionalInt(), t: time(), level: levels[Int(byte() % 3)], message: string()))
        default:
            if flag() {
                return .tunnel(TunnelRecord(conn: int(), t: time(), event: flag() ? .open : .end, client: optionalString(),
                                            target: string(), bytesUp: optionalInt(), bytesDown: optionalInt(),
                                            detail: optionalString()))
            }
            // A response's headers are written only with its status.
            let status = optionalInt()
            return .http(HTTPRecord(conn: int(), t: time(), tEnd: time(), client: string(), method: string(), url: string(),
                                    requestHeaders: headers(), requestBody: payload(), requestLength: int(),
                                    status: status, reason: optionalString(),
                                    responseHeaders: status == nil ? [] : headers(), responseBody: payload(),
                                    responseLength: int(), error: optionalString()))
        }
    }
}
