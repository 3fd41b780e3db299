import Capture
import Lifecycle
import Testing
import Vocabulary
@testable import Reports

/// Every format is written in pieces: a report of many clients never exists as one string
/// (200,000 unterminated connections made a 400 MB JUnit file and a 500 MB page, held
/// whole before they were written).
@Suite struct StreamedReportTests {
    /// 2,000 clients that each opened a connection and never ended it.
    static func manyClients() throws -> AnalysisReport {
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var builder = ReportBuilder()
        for conn in 1...2_000 {
            let ip = "10.0.\(conn >> 8).\(conn & 255)"
            builder.add(analyzer.feed(.open(OpenRecord(conn: conn, t: Micros(conn) * 10, client: "\(ip):4000", server: "127.0.0.1:80"))))
        }
        builder.add(analyzer.finish(at: 30_000))
        return builder.build(spec: spec, inputs: ["opens.jsonl"], grouping: ClientKeyMode.standard.description,
                             prefix: analyzer.prefix, endTime: 30_000)
    }

    @Test(arguments: ReportFormat.allCases)
    func everyFormatIsWrittenInBoundedPieces(_ format: ReportFormat) throws {
        let report = try Self.manyClients()
        #expect(report.clients.count == 2_000)
        var pieces: [Int] = []
        var whole = ""
        format.render(report) { piece in
            pieces.append(piece.utf8.count)
            whole += piece
        }
        // The threshold is 64 KiB; a piece goes out after the client or row that crossed it.
        #expect(pieces.count > 2, "\(format): \(pieces.count) pieces of \(whole.utf8.count) bytes")
        #expect(pieces.allSatisfy { $0 < (1 << 16) + 16_384 }, "\(format): largest piece \(pieces.max() ?? 0) bytes")
        // Nothing lost at a piece's edge: the last client is whole, and the end is there.
        #expect(whole.contains("client-2000"))
        let ending = switch format {
        case .text: "\nsummary: 2000 clients, 2000 connections: 0 errors, 0 warnings\n"
        case .json: "}\n"
        case .junit: "</testsuite>\n</testsuites>\n"
        case .html: "</body></html>\n"
        }
        #expect(whole.hasSuffix(ending))
    }
}
