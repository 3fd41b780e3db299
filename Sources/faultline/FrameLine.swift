import CLI
import Capture
import Glibc
import JSON
import WebSocket

/// Standard output in 64 KiB writes: one write(2) per frame would dominate on big captures.
struct BufferedOutput {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(80 * 1024) }

    mutating func flushIfFull() { if bytes.count >= 64 * 1024 { flush() } }

    /// Writes the buffered bytes as they are (no String round trip: they are UTF-8 already).
    mutating func flush() {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // a closed pipe ends quietly, as Console does
                }
                offset += n
            }
        }
        bytes.removeAll(keepingCapacity: true)
    }
}

/// The two renderings of one frame.
enum FrameLine {
    /// The Bird/Pusher event name of a text frame holding a JSON object with an "event" string.
    static func eventName(_ frame: FrameRecord) -> String? {
        guard frame.opcode == .text else { return nil }
        return EventNameScanner.eventName(in: frame.payload)
    }

    /// Microseconds as seconds with six decimals: "12.000345".
    static func seconds(_ t: Micros) -> String {
        var bytes: [UInt8] = []
        appendSeconds(t, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `t` as seconds with six decimals, digit by digit (no String on the way).
    static func appendSeconds(_ t: Micros, into out: inout [UInt8]) {
        if t < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = t.magnitude
        appendDigits(magnitude / 1_000_000, into: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(magnitude % 1_000_000, minimumCount: 6, into: &out)
    }

    /// Appends the decimal digits of `value`.
    static func appendDecimal<T: BinaryInteger>(_ value: T, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(UInt64(value.magnitude), into: &out)
    }

    /// Most significant digit first, zero-padded on the left to `minimumCount`.
    private static func appendDigits(_ value: UInt64, minimumCount: Int = 1, into out: inout [UInt8]) {
        var divisor: UInt64 = 1
        var count = 1
        while divisor <= value / 10 { divisor *= 10; count += 1 }
        while count < minimumCount { out.append(UInt8(ascii: "0")); count += 1 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private static func append(_ literal: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private static func appendBool(_ value: Bool, into out: inout [UInt8]) {
        append(value ? "true" : "false", into: &out)
    }

    /// Written byte by byte (no JSONObject, no String interpolation): this runs once per
    /// frame of captures of gigabytes. `t` gets six fixed decimals so microseconds stay visible.
    static func json(_ frame: FrameRecord, into out: inout [UInt8]) {
        append("{\"conn\":", into: &out)
        appendDecimal(frame.conn, into: &out)
        append(",\"t\":", into: &out)
        appendSeconds(frame.t, into: &out)
        append(frame.from == .client ? ",\"from\":\"client\"" : ",\"from\":\"server\"", into: &out)
        append(",\"opcode\":", into: &out)
        appendDecimal(frame.opcode.rawValue, into: &out)
        append(",\"fin\":", into: &out)
        appendBool(frame.fin, into: &out)
        append(",\"rsv1\":", into: &out)
        appendBool(frame.rsv1, into: &out)
        append(",\"len\":", into: &out)
        appendDecimal(frame.length, into: &out)
        if let code = frame.closeCode {
            append(",\"close_code\":", into: &out)
            appendDecimal(code, into: &out)
            append(",\"close_reason\":", into: &out)
            JSONWriter.writeString(frame.closeReason ?? "", into: &out)
        }
        if let event = eventName(frame) {
            append(",\"event\":", into: &out)
            JSONWriter.writeString(event, into: &out)
        }
        if frame.action != .forwarded {
            append(",\"action\":\"", into: &out)
            out.append(contentsOf: frame.action.name.utf8)
            out.append(UInt8(ascii: "\""))
            if case .delayed(let delay) = frame.action {
                append(",\"delay_us\":", into: &out)
                appendDecimal(delay, into: &out)
            }
        }
        if let fault = frame.fault {
            append(",\"fault\":", into: &out)
            JSONWriter.writeString(fault, into: &out)
        }
        if let error = frame.protocolError {
            append(",\"error\":", into: &out)
            JSONWriter.writeString(error, into: &out)
        }
        append("}\n", into: &out)
    }

    /// `   12.000345  #3    server->client  text   fin          31  bird:pong`
    static func text(_ frame: FrameRecord, into out: inout [UInt8]) {
        var line = pad(seconds(frame.t), 12, left: true)
        line += "  " + pad("#\(frame.conn)", 5)
        line += frame.from == .client ? " client->server" : " server->client"
        line += "  " + pad(shortName(frame.opcode), 6)
        var flags = frame.fin ? "fin" : "---"
        if frame.rsv1 { flags += ",rsv1" }
        if frame.rsv2 { flags += ",rsv2" }
        if frame.rsv3 { flags += ",rsv3" }
        line += " " + pad(flags, 8)
        line += pad(String(frame.length), 7, left: true)
        var details: [String] = []
        if let code = frame.closeCode {
            details.append("code=\(code)" + ((frame.closeReason ?? "").isEmpty ? "" : " reason=\"\(frame.closeReason!)\""))
        } else if let event = eventName(frame) {
            details.append(event)
        }
        if frame.action != .forwarded {
            if case .delayed(let delay) = frame.action {
                details.append("[delayed \(seconds(delay))s]")
            } else {
                details.append("[\(frame.action.name)]")
            }
        }
        if let fault = frame.fault { details.append("fault=\(fault)") }
        if let error = frame.protocolError { details.append("error: \(error)") }
        if !details.isEmpty { line += "  " + details.joined(separator: " ") }
        out.append(contentsOf: line.utf8)
        out.append(0x0A)
    }

    /// Opcode names fitting six columns: "cont" for continuation, "op0xb" for reserved ones.
    static func shortName(_ opcode: Opcode) -> String {
        if opcode == .continuation { return "cont" }
        if opcode.isReserved { return "op0x" + String(opcode.rawValue, radix: 16) }
        return opcode.name
    }

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? padding + text : text + padding
    }
}
