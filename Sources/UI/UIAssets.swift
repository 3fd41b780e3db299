import Vocabulary

/// The page's files, embedded in the binary at build time (`Assets/`, by the EmbedAssets
/// plugin): served from memory, nothing fetched from a CDN.
enum UIAssets {
    struct Asset: Sendable {
        var contentType: String
        var bytes: [UInt8]
    }

    /// Each file under its name, decoded once.
    static let files: [String: Asset] = {
        var files: [String: Asset] = [:]
        for (name, base64) in EmbeddedAssets.files {
            guard let bytes = Base64.decode(base64) else { continue }
            files[name] = Asset(contentType: contentType(of: name), bytes: bytes)
        }
        return files
    }()

    /// The asset a request path names: "/" is the page, "/app.js" the script, and so on.
    static func asset(path: String) -> Asset? {
        let name = path == "/" ? "index.html" : String(path.dropFirst())
        guard path.hasPrefix("/"), !name.contains("/") else { return nil }
        return files[name]
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
