import CLI
import Capture
import JSON
import WebSocket

/// `faultline frames INPUT [--format text|json]`: one decoded frame a line, streaming.
enum FramesCommand: Command {
    static let spec = CommandSpec(
        name: "frames",
        abstract: "Print the WebSocket frames of a capture, one a line.",
        discussion: """
            INPUT is a faultline capture (or '-' for standard input); its kind is detected
            from its first bytes. Records are read and printed as they come, in constant
            memory. Warnings (a torn last line) go to standard error.
            """,
        arguments: [ArgumentSpec("input", help: "The capture to read, or '-' for standard input.")],
        options: [
            OptionSpec("format", value: "format",
                       help: "text: aligned columns for people; json: one object a line with conn, t, from, opcode, fin, rsv1, len, close_code, close_reason, event, action.",
                       default: "text", choices: ["text", "json"]),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let path = arguments.positionals[0]
        let json = arguments.value("format") == "json"
        var source = try InputSources.open(path)
        var output = BufferedOutput()
        defer { output.flush() }
        while let record = try nextRecord(&source, output: &output) {
            guard case .frame(let frame) = record else { continue }
            if json { FrameLine.json(frame, into: &output.bytes) } else { FrameLine.text(frame, into: &output.bytes) }
            output.flushIfFull()
        }
        output.flush()
        for warning in source.warnings { Console.err("faultline: warning: \(warning)\n") }
        return ExitStatus.success
    }

    /// The next record; on an error, what was printed so far goes out first.
    private static func nextRecord(_ source: inout any RecordSource, output: inout BufferedOutput) throws -> CaptureRecord? {
        do {
            return try source.next()
        } catch {
            output.flush()
            throw error
        }
    }
}

/// Standard output in 64 KiB writes: one write(2) per frame would dominate on big captures.
struct BufferedOutput {
    var bytes: [UInt8] = []

    mutating func flushIfFull() { if bytes.count >= 64 * 1024 { flush() } }

    mutating func flush() {
        guard !bytes.isEmpty else { return }
        Console.write(fd: 1, String(decoding: bytes, as: UTF8.self))
        bytes.removeAll(keepingCapacity: true)
    }
}

/// The two renderings of one frame.
enum FrameLine {
    /// The Bird/Pusher event name of a text frame holding a JSON object with an "event" string.
    static func eventName(_ frame: FrameRecord) -> String? {
        guard frame.opcode == .text, frame.payload.first == UInt8(ascii: "{"),
              let value = try? JSONParser.parse(frame.payload) else { return nil }
        return value["event"]?.stringValue
    }

    /// Microseconds as seconds with six decimals: "12.000345".
    static func seconds(_ t: Micros) -> String {
        let sign = t < 0 ? "-" : ""
        let magnitude = t.magnitude
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// Written field by field (no JSONObject): this runs once per frame of captures of
    /// gigabytes. `t` gets six fixed decimals so microseconds stay visible.
    static func json(_ frame: FrameRecord, into out: inout [UInt8]) {
        func key(_ name: String) {
            out.append(contentsOf: name.utf8)
        }
        key("{\"conn\":\(frame.conn),\"t\":\(seconds(frame.t)),\"from\":\"\(frame.from.rawValue)\"")
        key(",\"opcode\":\(frame.opcode.rawValue),\"fin\":\(frame.fin),\"rsv1\":\(frame.rsv1),\"len\":\(frame.length)")
        if let code = frame.closeCode {
            key(",\"close_code\":\(code),\"close_reason\":")
            JSONWriter.writeString(frame.closeReason ?? "", into: &out)
        }
        if let event = eventName(frame) {
            key(",\"event\":")
            JSONWriter.writeString(event, into: &out)
        }
        if frame.action != .forwarded {
            key(",\"action\":\"\(frame.action.name)\"")
            if case .delayed(let delay) = frame.action { key(",\"delay_us\":\(delay)") }
        }
        if let fault = frame.fault {
            key(",\"fault\":")
            JSONWriter.writeString(fault, into: &out)
        }
        if let error = frame.protocolError {
            key(",\"error\":")
            JSONWriter.writeString(error, into: &out)
        }
        out.append(contentsOf: "}\n".utf8)
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
