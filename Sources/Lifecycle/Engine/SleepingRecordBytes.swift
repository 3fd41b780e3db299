import Capture
import Vocabulary
import WebSocket

/// The byte form a sleeping client keeps its open and frame records in (`SleepingClient`):
/// every field, integers as LEB128 varints (signed ones zig-zagged), strings as their
/// length and UTF-8 bytes. A one-frame connection's open and frame take about 55 bytes
/// this way, against some 190 as capture lines, and nothing is parsed to read them back.
/// Upgrades, ends and faults, rarer and of more shapes, stay capture lines.
///
/// Only `SleepingClient` writes these bytes and reads them back, in the same process; a
/// read that runs past the end or meets a value out of range gives nil rather than
/// trapping, and the client is then put to sleep as capture lines or kept awake.
enum SleepingRecordBytes {
    static func encode(_ open: OpenRecord, into bytes: inout [UInt8]) {
        appendSigned(Int64(open.conn), to: &bytes)
        appendSigned(open.t, to: &bytes)
        appendString(open.client, to: &bytes)
        appendString(open.server, to: &bytes)
        appendOptionalString(open.upstream, to: &bytes)
    }

    /// The frame's fields but its in-memory decoding (`FrameRecord.decoded`), which the
    /// sleeping client keeps apart.
    static func encode(_ frame: FrameRecord, into bytes: inout [UInt8]) {
        appendSigned(Int64(frame.conn), to: &bytes)
        appendSigned(frame.t, to: &bytes)
        var flags: UInt8 = frame.from == .server ? 1 : 0
        for (bit, set) in [(1, frame.fin), (2, frame.rsv1), (3, frame.rsv2), (4, frame.rsv3), (5, frame.masked),
                           (6, frame.compressed)] where set {
            flags |= 1 << bit
        }
        bytes.append(flags)
        bytes.append(frame.opcode.rawValue)
        switch frame.action {
        case .forwarded: bytes.append(0)
        case .dropped: bytes.append(1)
        case .delayed(let delay): bytes.append(2); appendSigned(delay, to: &bytes)
        case .injected: bytes.append(3)
        case .observed: bytes.append(4)
        }
        appendSigned(Int64(frame.length), to: &bytes)
        appendUnsigned(UInt64(frame.payload.count), to: &bytes)
        bytes.append(contentsOf: frame.payload)
        appendOptionalString(frame.protocolError, to: &bytes)
        appendOptionalString(frame.fault, to: &bytes)
        appendOptionalString(frame.sha256, to: &bytes)
    }

    /// Reads what `encode(_: OpenRecord, ...)` wrote at `i`, moving `i` past it.
    static func open(_ bytes: [UInt8], at i: inout Int) -> OpenRecord? {
        guard let conn = signed(bytes, &i).flatMap({ Int(exactly: $0) }), let t = signed(bytes, &i),
              let client = string(bytes, &i), let server = string(bytes, &i), let upstream = optionalString(bytes, &i)
        else { return nil }
        return OpenRecord(conn: conn, t: t, client: client, server: server, upstream: upstream)
    }

    /// Reads what `encode(_: FrameRecord, ...)` wrote at `i` (not decoded), moving `i` past it.
    static func frame(_ bytes: [UInt8], at i: inout Int) -> FrameRecord? {
        guard let conn = signed(bytes, &i).flatMap({ Int(exactly: $0) }), let t = signed(bytes, &i),
              i + 3 <= bytes.count else { return nil }
        let flags = bytes[i]
        let opcode = Opcode(rawValue: bytes[i + 1])
        let actionTag = bytes[i + 2]
        i += 3
        let action: FrameAction
        switch actionTag {
        case 0: action = .forwarded
        case 1: action = .dropped
        case 2:
            guard let delay = signed(bytes, &i) else { return nil }
            action = .delayed(delay)
        case 3: action = .injected
        case 4: action = .observed
        default: return nil
        }
        guard let length = signed(bytes, &i).flatMap({ Int(exactly: $0) }), let payload = byteRun(bytes, &i),
              let protocolError = optionalString(bytes, &i), let fault = optionalString(bytes, &i),
              let sha256 = optionalString(bytes, &i) else { return nil }
        func flag(_ bit: Int) -> Bool { flags & (1 << bit) != 0 }
        var frame = FrameRecord(conn: conn, t: t, from: flag(0) ? .server : .client, opcode: opcode, fin: flag(1),
                                rsv1: flag(2), rsv2: flag(3), rsv3: flag(4), masked: flag(5), length: length,
                                payload: payload, compressed: flag(6), action: action, protocolError: protocolError,
                                fault: fault)
        frame.sha256 = sha256
        return frame
    }

    // MARK: the parts

    private static func appendUnsigned(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Zig-zag: small magnitudes of either sign take few bytes.
    private static func appendSigned(_ value: Int64, to bytes: inout [UInt8]) {
        appendUnsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &bytes)
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        appendUnsigned(UInt64(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    /// 0 for nil, else the length plus one, then the bytes.
    private static func appendOptionalString(_ text: String?, to bytes: inout [UInt8]) {
        guard let text else { bytes.append(0); return }
        appendUnsigned(UInt64(text.utf8.count) + 1, to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func unsigned(_ bytes: [UInt8], _ i: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count, shift < 64 {
            let byte = bytes[i]
            i += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    private static func signed(_ bytes: [UInt8], _ i: inout Int) -> Int64? {
        guard let raw = unsigned(bytes, &i) else { return nil }
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// `count` bytes at `i`, the count first.
    private static func byteRun(_ bytes: [UInt8], _ i: inout Int, count given: UInt64? = nil) -> [UInt8]? {
        guard let count = given ?? unsigned(bytes, &i), count <= UInt64(bytes.count - i) else { return nil }
        let end = i + Int(count)
        defer { i = end }
        return Array(bytes[i..<end])
    }

    private static func string(_ bytes: [UInt8], _ i: inout Int) -> String? {
        byteRun(bytes, &i).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func optionalString(_ bytes: [UInt8], _ i: inout Int) -> String?? {
        guard let marker = unsigned(bytes, &i) else { return nil }
        guard marker > 0 else { return .some(nil) }
        return byteRun(bytes, &i, count: marker - 1).map { String(decoding: $0, as: UTF8.self) }
    }
}
