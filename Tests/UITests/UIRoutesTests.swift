import Testing
import ControlAPI
import WebSocket
@testable import UI

/// The plain HTTP answers: the embedded files, each with the security headers' policy
/// (no inline script), and lanes by client id.
@Suite struct UIRoutesTests {
    let access = UIAccess(token: nil, loopbackOnly: true)
    let host = [HeaderField("Host", "127.0.0.1:8090")]

    @Test func thePageAndItsFilesAreEmbedded() throws {
        let model = try Session.model()
        for (path, type) in [("/", "text/html"), ("/app.js", "text/javascript"), ("/app.css", "text/css"), ("/favicon.svg", "image/svg+xml")] {
            let response = UIRoutes.respond(to: ControlRequest(method: "GET", path: path, headers: host), access: access, model: model)
            #expect(response.status == 200, "\(path)")
            #expect(response.headers.first(named: "Content-Type")?.hasPrefix(type) == true, "\(path)")
            #expect(!response.body.isEmpty)
        }
        let page = String(decoding: UIRoutes.respond(to: ControlRequest(method: "GET", path: "/", headers: host), access: access, model: model).body, as: UTF8.self)
        // The policy forbids inline script: the page has none, only its own file.
        #expect(page.contains("<script src=\"/app.js\""))
        #expect(!page.contains("<script>") && !page.contains("onclick") && !page.contains("<style>"))
        #expect(UIRoutes.contentSecurityPolicy.contains("script-src 'self'") && !UIRoutes.contentSecurityPolicy.contains("unsafe"))
        #expect(UIRoutes.respond(to: ControlRequest(method: "GET", path: "/../etc/passwd", headers: host), access: access, model: model).status == 404)
        #expect(UIRoutes.respond(to: ControlRequest(method: "POST", path: "/", headers: host), access: access, model: model).status == 405)
    }

    @Test func lanesAreFoundByPercentEncodedClientIDs() throws {
        #expect(UIRoutes.percentDecoded("2%2Fclient-1") == "2/client-1")
        #expect(UIRoutes.percentDecoded("a+b%20c") == "a b c")
        #expect(UIRoutes.percentDecoded("%zz") == nil)
        #expect(UIRoutes.percentDecoded("%ff") == nil)
        let model = try Session.model()
        let missing = UIRoutes.respond(to: ControlRequest(method: "GET", target: "/lane.svg?client=nobody", headers: host), access: access, model: model)
        #expect(missing.status == 404)
    }
}
