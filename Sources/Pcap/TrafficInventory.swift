/// What a pcap held, counted as it is decoded, for the message that says why it gave no
/// WebSocket connection ("412 packets, 3 TCP flows: port 5432 (2), port 443 (1)"). Memory
/// is bounded: at most `maxPorts` distinct ports are counted; flows to others are summed.
public struct TrafficInventory: Sendable, Equatable {
    public static let maxPorts = 1024

    /// Every packet read (after the BPF filter, which libpcap applies).
    public internal(set) var packets = 0
    /// Packets that were TCP.
    public internal(set) var tcpPackets = 0
    /// TCP flows seen (a new pair of addresses and ports, or one reused after its end).
    public internal(set) var tcpFlows = 0
    /// Flows by server port: the destination of the opening SYN, or, for a flow whose
    /// start was not captured, the lower of its two ports.
    private var flowsByPort: [UInt16: Int] = [:]
    /// Flows whose port was not counted because `maxPorts` were already.
    public internal(set) var flowsToOtherPorts = 0

    public init() {}

    /// The port a new flow is counted under: the destination of the opening SYN, or, for a
    /// flow whose start was not captured, the lower of its two ports.
    static func port(of segment: TCPSegment) -> UInt16 {
        let opening = segment.flags.contains(.syn) && !segment.flags.contains(.ack)
        return opening ? segment.destination.port : min(segment.source.port, segment.destination.port)
    }

    mutating func countFlow(port: UInt16) {
        tcpFlows += 1
        if flowsByPort[port] != nil || flowsByPort.count < Self.maxPorts {
            flowsByPort[port, default: 0] += 1
        } else {
            flowsToOtherPorts += 1
        }
    }

    /// The ports with the most flows first (ties: the lower port), at most `limit`.
    public func busiestPorts(_ limit: Int) -> [(port: UInt16, flows: Int)] {
        flowsByPort.map { (port: $0.key, flows: $0.value) }
            .sorted { $0.flows != $1.flows ? $0.flows > $1.flows : $0.port < $1.port }
            .prefix(limit).map { $0 }
    }
}
