import WebSocket

/// What the simulator's client and server runners share about reading an open WebSocket:
/// the frame loop and how a close frame is told apart. Each runner says only what each
/// outcome means for it (a close sent, a socket forgotten, an event fed to its machine).
protocol SimFrameReading: AnyObject {
    var decoder: FrameDecoder { get set }
    /// The peer sent a close frame.
    var peerSentClose: Bool { get set }
    /// Open or closing: frames are still read.
    var readsFrames: Bool { get }
    /// We sent a close and wait for the peer's.
    var isClosing: Bool { get }
}

/// One outcome of reading.
enum SimIncoming {
    /// A frame for the machine, the peer's opening close included (`peerSentClose` is set).
    case frame(Frame)
    /// The peer broke the protocol; the socket must end. Nothing is read after it.
    case protocolError(WebSocketError)
    /// The peer's close answering ours: the close handshake is complete. Nothing is read
    /// after it.
    case closeAnswered
}

extension SimFrameReading {
    /// Decodes `bytes` (after whatever was buffered) and hands each outcome on, for as
    /// long as the socket still reads frames: a handler that ends the socket stops the loop.
    func readFrames(_ bytes: [UInt8], _ handle: (SimIncoming) -> Void) {
        decoder.append(bytes)
        while readsFrames {
            let frame: Frame
            do {
                guard let next = try decoder.next() else { return }
                frame = next
            } catch {
                handle(.protocolError(error))
                return
            }
            if frame.opcode == .close {
                peerSentClose = true
                if isClosing {
                    handle(.closeAnswered)
                    return
                }
            }
            handle(.frame(frame))
        }
    }
}
