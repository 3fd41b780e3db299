import Testing
import WebSocket

@Suite struct CompressedMessageTests {
    @Test func gathersACompressedMessageUntilItsLastFrame() {
        var message = CompressedMessage(maxBytes: 10)
        #expect(message.add(opcode: .text, rsv1: true, fin: false, payload: [1, 2]) == .partial)
        #expect(message.add(opcode: .continuation, rsv1: false, fin: true, payload: [3]) == .complete([1, 2, 3]))
        #expect(message.add(opcode: .text, rsv1: false, fin: true, payload: [9]) == .notCompressed)
    }

    @Test func givesUpOnceAtTheBoundAndLetsTheRestPassAsSent() {
        var message = CompressedMessage(maxBytes: 10)
        #expect(message.add(opcode: .binary, rsv1: true, fin: false, payload: [UInt8](repeating: 0, count: 6)) == .partial)
        #expect(message.add(opcode: .continuation, rsv1: false, fin: false, payload: [UInt8](repeating: 0, count: 4)) == .partial)
        #expect(message.add(opcode: .continuation, rsv1: false, fin: false, payload: [0]) == .tooLarge)
        #expect(message.add(opcode: .continuation, rsv1: false, fin: true, payload: [0]) == .notCompressed)
        // The next message starts afresh.
        #expect(message.add(opcode: .text, rsv1: true, fin: true, payload: [5]) == .complete([5]))
    }
}
