/// Every fault kind, by name. Adding a kind means adding its file and one line here.
public enum FaultRegistry {
    public static let kinds: [any Fault.Type] = [
        StallPongs.self,
        StallPings.self,
        CloseFault.self,
        DropFault.self,
        ResetFault.self,
        Blackhole.self,
        Latency.self,
        Refuse.self,
        RefuseHTTP.self,
        StripSocketID.self,
        ActivityTimeout.self,
        Inject.self,
        Bandwidth.self,
        Slicer.self,
        Fragment.self,
        SlowClose.self,
        LimitData.self,
        Timeout.self,
        DropMessage.self,
        DelayMessage.self,
        Duplicate.self,
        Reorder.self,
        Rewrite.self,
    ]

    public static var names: [String] { kinds.map { $0.kind } }

    public static func kind(named name: String) -> (any Fault.Type)? {
        kinds.first { $0.kind == name }
    }

    /// "  close:CODE   send a close frame ..." lines for `--help` and docs.
    public static var helpLines: [String] {
        kinds.map { type in
            let head = type.kind + (type.example.map { ":" + $0 } ?? "")
            return "  " + head + "  " + type.summary
        }
    }
}
