import Capture
import WebSocket

/// A recorded upgrade is sent again by replay (the request as the client, the response as
/// the server): a target, reason or header holding a control character would split the
/// head on the wire, smuggling a second request or injecting headers. Such a recording is
/// refused before anything is replayed; the head writer would neutralise the bytes anyway,
/// but a replay that silently sends something else than the recording is no replay.
extension RecordedConnection {
    /// Why the recorded heads cannot be sent, or nil when they can.
    public var unsendableHead: String? {
        for (record, name) in [(request, "request"), (response, "response")] {
            guard let record else { continue }
            var parts: [(String, String, Bool)] = []
            if let method = record.method { parts.append(("method", method, false)) }
            if let target = record.target { parts.append(("target", target, false)) }
            if let reason = record.reason { parts.append(("reason", reason, true)) }
            for field in record.headers {
                parts.append(("header name '\(Self.printable(field.name))'", field.name, false))
                parts.append(("header '\(Self.printable(field.name))'", field.value, true))
            }
            for (part, text, allowingTab) in parts {
                if let found = HTTPHeadText.firstControl(in: text, allowingTab: allowingTab) {
                    return "connection \(conn): the recorded upgrade \(name)'s \(part) holds \(HTTPHeadText.describe(found.byte)) at byte \(found.offset); replay sends no HTTP head with control characters"
                }
            }
        }
        return nil
    }

    /// A header name for a message: controls shown as `?`, so the message stays one line.
    private static func printable(_ name: String) -> String {
        String(decoding: name.utf8.map { $0 < 32 || $0 == 127 ? 63 : $0 }, as: UTF8.self)
    }
}
