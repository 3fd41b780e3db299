import ControlAPI
import Faults
import JSON
import ProxyCore
import Testing
import Vocabulary

/// `/intercept` through the router, pure: pauses land on the desk and the connection is
/// told at once; refusals name what is wrong; a decision for a message that is not held is
/// a 404, never queued. (Holding and deciding on a session: `InterceptTests` in ProxyCoreTests.)
@Suite struct InterceptEndpointTests {
    final class DeskBackend: ControlBackend {
        let faultEngine = FaultEngine()
        let desk = InterceptDesk()
        var changed: [ConnectionID?] = []
        func connectionSummaries() -> [JSONValue] { [["id": 1], ["id": 2]] }
        func faultsChanged(connection: ConnectionID?) -> Bool { changed.append(connection); return true }
        func metrics() -> ControlMetrics { ControlMetrics() }
        var interceptDesk: InterceptDesk? { desk }
    }

    let router = ControlRouter(token: nil, loopbackOnly: false)

    func post(_ path: String, _ body: String, _ backend: DeskBackend) -> ControlResponse {
        router.respond(to: ControlRequest(method: "POST", path: path, body: Array(body.utf8)), backend: backend)
    }

    @Test func aPauseLandsOnTheDeskAndTheConnectionIsToldAtOnce() {
        let backend = DeskBackend()
        let response = post("/intercept", #"{"conn":2,"from":"server","match":"secret","timeout":"5s"}"#, backend)
        #expect(response.status == 200)
        #expect(backend.desk.pause(for: 2) == InterceptPause(from: .server, match: "secret", timeout: 5_000_000))
        #expect(backend.desk.pause(for: 1) == nil)
        #expect(backend.changed == [2])
        let listed = router.respond(to: ControlRequest(method: "GET", path: "/intercept"), backend: backend).jsonBody
        #expect(listed?["pauses"]?.arrayValue?.first?["match"]?.stringValue == "secret")
        #expect(post("/intercept/resume", #"{"conn":2}"#, backend).status == 200)
        #expect(backend.desk.pause(for: 2) == nil)
        #expect(backend.changed == [2, 2])
    }

    @Test func aPauseWithoutAConnectionCoversEveryOneAndResumeEndsIt() {
        let backend = DeskBackend()
        #expect(post("/intercept", "", backend).status == 200)
        #expect(backend.desk.pause(for: 7) == InterceptPause())
        #expect(backend.changed == [nil])
        #expect(post("/intercept/resume", "{}", backend).status == 200)
        #expect(backend.desk.pause(for: 7) == nil)
    }

    @Test func refusalsNameWhatIsWrong() {
        let backend = DeskBackend()
        #expect(post("/intercept", #"{"from":"both"}"#, backend).jsonBody?["error"]?.stringValue == "'from' is client or server, not 'both'")
        #expect(post("/intercept", #"{"timeout":"0s"}"#, backend).status == 400)
        #expect(post("/intercept", #"{"conn":9}"#, backend).jsonBody?["error"]?.stringValue == "no open connection 9")
        #expect(post("/intercept", #"{"conn":-1}"#, backend).status == 400)
        #expect(post("/intercept", "[1]", backend).jsonBody?["error"]?.stringValue == "the body must be a JSON object")
        #expect(post("/intercept/1/1", #"{"action":"bend"}"#, backend).jsonBody?["error"]?.stringValue == "'action' is forward, edit or drop")
        #expect(post("/intercept/1/1", #"{"action":"edit"}"#, backend).status == 400)
        let missing = post("/intercept/1/1", #"{"action":"forward"}"#, backend)
        #expect(missing.status == 404)
        #expect(backend.changed.isEmpty, "nothing was changed, so no connection was told")
    }
}
