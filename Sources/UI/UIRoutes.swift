import ControlAPI
import WebSocket

/// The UI's plain HTTP answers, pure: the embedded page and its files, and one client's
/// lane as an SVG image (`/lane.svg?client=ID`). Every answer carries the same security
/// headers: a Content-Security-Policy that allows only this origin's own script, style,
/// images and socket (no inline script, no other site), no framing, no sniffing, no
/// referrer.
package enum UIRoutes {
    package static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    package static var securityHeaders: [HeaderField] {
        [
            HeaderField("Content-Security-Policy", contentSecurityPolicy),
            HeaderField("X-Content-Type-Options", "nosniff"),
            HeaderField("X-Frame-Options", "DENY"),
            HeaderField("Referrer-Policy", "no-referrer"),
            HeaderField("Cache-Control", "no-store"),
        ]
    }

    /// The path the page's live socket is opened on.
    package static let livePath = "/live"

    package static func respond(to request: ControlRequest, access: UIAccess, model: UIModel) -> ControlResponse {
        switch access.check(path: request.path, query: request.query, headers: request.headers, needsOrigin: false) {
        case .allow: break
        case .setCookie(let location):
            return ControlResponse(status: 303, headers: [HeaderField("Location", location), HeaderField("Set-Cookie", access.cookieHeader())])
        case .refuse(let status, let message):
            return text(status, message)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return text(405, "\(request.method) is not allowed here (the UI's actions travel on its live socket)")
        }
        if request.path == "/lane.svg" {
            guard let id = UIAccess.queryValue("client", in: request.query).flatMap(percentDecoded),
                  let svg = model.laneImage(client: id) else {
                return text(404, "no such client")
            }
            return ControlResponse(status: 200, headers: [HeaderField("Content-Type", "image/svg+xml")], body: Array(svg.utf8))
        }
        guard let asset = UIAssets.asset(path: request.path) else { return text(404, "not found") }
        return ControlResponse(status: 200, headers: [HeaderField("Content-Type", asset.contentType)], body: asset.bytes)
    }

    static func text(_ status: Int, _ message: String) -> ControlResponse {
        ControlResponse(status: status, headers: [HeaderField("Content-Type", "text/plain; charset=utf-8")],
                        body: Array("faultline ui: \(message)\n".utf8))
    }

    /// `%XX` escapes and `+` decoded; nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+"): bytes.append(32)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}
