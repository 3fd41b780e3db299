import CLI
import Capture
import Glibc
import JSON
import Protocols
import Vocabulary
import WebSocket

/// The two renderings of one frame.
package enum FrameLine {
    /// The Bird/Pusher event name of a text frame holding a JSON object with an "event" string.
    package static func eventName(_ frame: FrameRecord) -> String? {
        guard frame.opcode == .text else { return nil }
        return EventNameScanner.eventName(in: frame.payload)
    }

    /// Microseconds as seconds with six decimals: "12.000345".
    package static func seconds(_ t: Micros) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = ByteCursor(buffer.baseAddress!)
            cursor.seconds(t)
            return cursor.position - buffer.baseAddress!
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// A rare string field (close reason, fault, error) JSON-escaped ahead of time, so the
    /// line's length bound is known before it is written.
    private static func escaped(_ text: String?) -> [UInt8]? {
        guard let text else { return nil }
        var out: [UInt8] = []
        JSONWriter.writeString(text, into: &out)
        return out
    }

    /// One JSON object a line, written by pointer: this runs once per frame of captures of
    /// gigabytes. `t` gets six fixed decimals so microseconds stay visible. The event name
    /// is copied straight from the payload when it is printable ASCII without escapes.
    package static func json(_ frame: FrameRecord, into output: inout BufferedOutput) {
        let closeCode = frame.closeCode
        let reason = closeCode == nil ? nil : escaped(frame.closeReason ?? "")
        let fault = escaped(frame.fault)
        let error = escaped(frame.protocolError)
        // Scalars copied out first, so the closures below capture these and not the record
        // (whose copy would retain its payload and strings once per frame).
        let conn = frame.conn, t = frame.t, fromClient = frame.from == .client, opcode = frame.opcode.rawValue
        let fin = frame.fin, rsv1 = frame.rsv1, length = frame.length, action = frame.action, isText = frame.opcode == .text
        frame.payload.withUnsafeBufferPointer { payload in
            var event: EventNameScanner.Found? = isText ? EventNameScanner.find(in: payload) : nil
            // A name is copied as it is only when it is printable ASCII: past that it may hold
            // a C1 control or a bidi override, which the JSON writer escapes.
            if case .span(let range) = event, !isPrintableASCII(UnsafeBufferPointer(rebasing: payload[range])) {
                event = .decoded(String(decoding: UnsafeBufferPointer(rebasing: payload[range]), as: UTF8.self))
            }
            var decodedEvent: [UInt8]?
            if case .decoded(let name) = event { decodedEvent = escaped(name) }
            var eventLength = 0
            if case .span(let range) = event { eventLength = range.count + 2 }
            let variable = (reason?.count ?? 0) + (fault?.count ?? 0) + (error?.count ?? 0) + (decodedEvent?.count ?? 0) + eventLength
            output.write(maxBytes: 320 + variable) { line in
                // Fixed text in as few pieces as possible: each piece is a short memcpy.
                line.literal("{\"conn\":")
                line.decimal(conn)
                line.literal(",\"t\":")
                line.seconds(t)
                line.literal(fromClient ? ",\"from\":\"client\",\"opcode\":" : ",\"from\":\"server\",\"opcode\":")
                line.decimal(opcode)
                switch (fin, rsv1) {
                case (true, false): line.literal(",\"fin\":true,\"rsv1\":false,\"len\":")
                case (true, true): line.literal(",\"fin\":true,\"rsv1\":true,\"len\":")
                case (false, false): line.literal(",\"fin\":false,\"rsv1\":false,\"len\":")
                case (false, true): line.literal(",\"fin\":false,\"rsv1\":true,\"len\":")
                }
                line.decimal(length)
                if let code = closeCode, let reason {
                    line.literal(",\"close_code\":")
                    line.decimal(code)
                    line.literal(",\"close_reason\":")
                    reason.withUnsafeBufferPointer { line.bytes($0) }
                }
                if case .span(let range) = event {
                    line.literal(",\"event\":\"")
                    line.bytes(UnsafeBufferPointer(rebasing: payload[range]))
                    line.byte(UInt8(ascii: "\""))
                } else if let decodedEvent {
                    line.literal(",\"event\":")
                    decodedEvent.withUnsafeBufferPointer { line.bytes($0) }
                }
                if action == .observed, fault == nil, error == nil {
                    // Every frame decoded from a pcap ends this way.
                    line.literal(",\"action\":\"observed\"}\n")
                    return
                }
                switch action {
                case .forwarded: break
                case .dropped: line.literal(",\"action\":\"dropped\"")
                case .injected: line.literal(",\"action\":\"injected\"")
                case .observed: line.literal(",\"action\":\"observed\"")
                case .delayed(let delay):
                    line.literal(",\"action\":\"delayed\",\"delay_us\":")
                    line.decimal(delay)
                }
                if let fault {
                    line.literal(",\"fault\":")
                    fault.withUnsafeBufferPointer { line.bytes($0) }
                }
                if let error {
                    line.literal(",\"error\":")
                    error.withUnsafeBufferPointer { line.bytes($0) }
                }
                line.literal("}\n")
            }
        }
    }

    /// Every byte between 0x20 and 0x7E: what a JSON string may hold unescaped and print as it is.
    private static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte < 0x20 || byte >= 0x7F { return false }
        return true
    }

    /// `   12.000345  #3    server->client  text   fin          31  bird:pong`, control
    /// characters escaped (`TerminalText`).
    package static func text(_ frame: FrameRecord, into output: inout BufferedOutput) {
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
        // Close reasons, event names, faults and errors come from the peer or the file.
        output.write(Array((TerminalText.escape(line) + "\n").utf8))
    }

    /// Opcode names fitting six columns: "cont" for continuation, "op0xb" for reserved ones.
    package static func shortName(_ opcode: Opcode) -> String {
        if opcode == .continuation { return "cont" }
        if opcode.isReserved { return "op0x" + String(opcode.rawValue, radix: 16) }
        return opcode.name
    }

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? padding + text : text + padding
    }
}
