import Testing
@testable import Lifecycle

/// The client key's stable target takes a shortcut when the target keeps every parameter
/// as written (`keepsEveryParameter`): it must give exactly what rebuilding it item by item
/// gives, on the ordinary targets and on the odd ones where the rebuilt form differs.
@Suite struct ClientKeyModeTests {
    static let targets = [
        "/app/synth-key?protocol=7&client=bird-swift&version=2.3.3",
        "/app/k?protocol=7&t=123&token=x",
        "/app/k", "/app/k?", "/app/k?&", "/app/k?a=1&", "/app/k?&a=1", "/app/k?a=1&&b=2",
        "/app/k?flag", "/app/k?a=1&flag&b=2", "/app/k?a=", "/app/k?=1", "/app/k?a==1",
        "/app/k?_=1", "/app/k?auth=x", "/app/k?authx=1", "/app/k?nonce=1&ts=2&timestamp=3",
        "/app/k?a=1?b=2", "/socket.io/?EIO=4&transport=websocket&sid=abc",
        "/app/k?x=\u{301}2", "/app/k?\u{301}t=2", "/app/k?a=1&\u{301}t=2", "/café?a=1",
        "/app/k?a=1\r\n&b=2",
    ]

    @Test(arguments: targets)
    func theShortcutGivesWhatRebuildingGives(target: String) {
        #expect(ClientKeyMode.stableTarget(target) == ClientKeyMode.rebuiltTarget(target))
        if ClientKeyMode.keepsEveryParameter(target) {
            #expect(ClientKeyMode.rebuiltTarget(target) == target)
        }
    }

    @Test func theShortcutTakesOrdinaryTargetsAndLeavesTheRest() {
        #expect(ClientKeyMode.keepsEveryParameter("/app/synth-key?protocol=7&client=bird-swift&version=2.3.3"))
        #expect(ClientKeyMode.keepsEveryParameter("/app/k"))
        #expect(!ClientKeyMode.keepsEveryParameter("/app/k?protocol=7&t=123"))
        #expect(!ClientKeyMode.keepsEveryParameter("/app/k?a=1&&b=2"))
        #expect(!ClientKeyMode.keepsEveryParameter("/app/k?flag"))
        #expect(!ClientKeyMode.keepsEveryParameter("/app/k?"))
        #expect(!ClientKeyMode.keepsEveryParameter("/app/k?a=1&"))
        #expect(!ClientKeyMode.keepsEveryParameter("/café?a=1"))
        #expect(ClientKeyMode.stableTarget("/app/k?a=1&&t=2&flag") == "/app/k?a=1&flag=")
    }
}
