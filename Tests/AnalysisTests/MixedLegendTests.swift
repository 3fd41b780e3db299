import Analysis
import Foundation
import Reports
import Testing
import TestSupport

/// The HTML report's legend explains every colour its lanes use. In a mixed capture each
/// client's lane is drawn in its own spec's states (socketio's `reconnecting`, graphql-ws's
/// `closed`), so the legend lists each spec's states in a group named after the spec; a
/// single-spec report keeps its one flat list.
@Suite struct MixedLegendTests {
    /// The legend paragraph of the page.
    static func legend(_ html: String) throws -> String {
        let start = try #require(html.range(of: "<p class=\"legend\">"))
        let end = try #require(html.range(of: "</p>", range: start.upperBound..<html.endIndex))
        return String(html[start.upperBound..<end.lowerBound])
    }

    /// The state names of the swatches in `fragment`, in order.
    static func states(in fragment: Substring) -> [String] {
        fragment.components(separatedBy: "<i class=\"sw\"").dropFirst().compactMap { piece in
            guard let close = piece.range(of: "></i>"), let end = piece.range(of: "</span>", range: close.upperBound..<piece.endIndex)
            else { return nil }
            return String(piece[close.upperBound..<end.lowerBound])
        }
    }

    /// Each `spec-states` group of the legend: its spec and its states.
    static func groups(_ legend: String) -> [(spec: String, states: [String])] {
        legend.components(separatedBy: "<span class=\"spec-states\" data-spec=\"").dropFirst().map { piece in
            let spec = String(piece.prefix { $0 != "\"" })
            let body = piece.range(of: "<b>").map { piece[..<$0.lowerBound] } ?? piece[...]
            return (spec, states(in: body))
        }
    }

    @Test func aMixedCaptureShowsEachSpecsStatesUnderItsName() throws {
        let report = try SpecPerClientTests.report(SpecPerClientTests.mixed)
        let legend = try Self.legend(HTMLReport.render(report))
        let groups = Self.groups(legend)
        #expect(groups.map(\.spec) == ["bird", "socketio", "graphql-ws", "signalr"], "\(legend)")
        // Each spec's initial, connecting, connected, backoff, disconnected and failed
        // states, as its file names them (Sources/Lifecycle/Specs).
        #expect(groups.map(\.states) == [
            ["initialized", "connecting", "connected", "unavailable", "disconnected", "failed"],
            ["initialized", "connecting", "connected", "reconnecting", "disconnected", "failed"],
            ["disconnected", "connecting", "connected", "reconnecting", "closed", "failed"],
            ["disconnected", "connecting", "connected", "reconnecting", "failed"],
        ], "\(legend)")
        #expect(legend.contains("<code>graphql-ws</code>: "))
    }

    @Test func aSingleSpecReportKeepsOneFlatList() throws {
        let report = try SpecPerClientTests.report(TestEnvironment.path("Captures/graphql-ws-clean.jsonl"))
        let legend = try Self.legend(HTMLReport.render(report))
        #expect(Self.groups(legend).isEmpty)
        #expect(Self.states(in: legend[...]) == ["disconnected", "connecting", "connected", "reconnecting", "closed", "failed"])
    }
}
