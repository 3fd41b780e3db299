import Vocabulary

/// The connections list's filter, applied on the server so the page only ever holds the
/// rows it shows. Words separated by spaces, all of which must match (case ignored):
/// `state:failed`, `client:client-3`, `path:/app`, `ua:okhttp`, `conn:12`, `open` (not
/// ended), `findings` (its client has findings); any other word is looked for in the
/// client key, path, User-Agent, state and client id.
package struct UIFilter: Sendable, Equatable {
    package enum Term: Sendable, Equatable {
        case field(String, String)
        case open
        case findings
        case text(String)
    }

    package static let fields: Set<String> = ["state", "client", "path", "ua", "conn"]
    package var terms: [Term]

    /// At most 16 words of 200 characters are read (a filter is typed by a person).
    package init(_ text: String) {
        terms = text.lowercased().split(separator: " ").prefix(16).map { word in
            let word = String(word.prefix(200))
            if word == "open" { return .open }
            if word == "findings" { return .findings }
            if let colon = word.firstIndex(of: ":"), Self.fields.contains(String(word[..<colon])) {
                return .field(String(word[..<colon]), String(word[word.index(after: colon)...]))
            }
            return .text(word)
        }
    }

    package var isEmpty: Bool { terms.isEmpty }

    func matches(_ row: UIModel.Row, client: UIModel.Client?) -> Bool {
        terms.allSatisfy { term in
            switch term {
            case .open: row.endedAt == nil
            case .findings: (client?.findings ?? 0) > 0
            case .field("state", let value): (client?.state ?? "").lowercased().contains(value)
            case .field("client", let value): (row.client ?? "").lowercased().contains(value)
            case .field("path", let value): row.path.lowercased().contains(value)
            case .field("ua", let value): row.userAgent.lowercased().contains(value)
            case .field("conn", let value): String(row.conn) == value
            case .field: false
            case .text(let word):
                [client?.info.key ?? "", row.path, row.userAgent, client?.state ?? "", row.client ?? ""]
                    .contains { $0.lowercased().contains(word) }
            }
        }
    }
}
