/// Every lifecycle rule, registered by its stable id. Adding a rule: one file, one line here.
public enum RuleRegistry {
    public static let all: [any LifecycleRule.Type] = [
        BackoffBound.self,
        BackoffReset.self,
        BackoffJitter.self,
        CloseImmediateRetry.self,
        FailedRetried.self,
        StalePingMissing.self,
        StaleCloseMissing.self,
        StaleCloseCode.self,
        StalePrematureClose.self,
        StalePongMissing.self,
        ReconnectMissing.self,
        HandshakeMissingID.self,
        HandshakeEarlySubscribe.self,
        ChannelsResubscribe.self,
        ChannelsRejoin.self,
        ChannelsStaleAuth.self,
        ChannelsAuthSignature.self,
        SigninRepeat.self,
        TriggerUnsubscribed.self,
        ServerHandshakeMissingID.self,
        ServerPongMissing.self,
        AgoraBackoffSchedule.self,
        AgoraSuspendedInterval.self,
        AgoraFailedRetried.self,
        AgoraStreamGiveUp.self,
    ]

    public static var ids: [String] { all.map { $0.id } }

    public static func type(for id: String) -> (any LifecycleRule.Type)? {
        all.first { $0.id == id }
    }
}
