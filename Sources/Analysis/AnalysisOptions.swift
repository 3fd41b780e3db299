import Lifecycle
import Reports
import Vocabulary

/// Everything an `AnalysisRun` is told besides its inputs: what `faultline analyze` takes on
/// its command line, and what the demo and FaultlineKit set for themselves.
public struct AnalysisOptions: Sendable {
    /// Which spec judges the inputs (see `SpecChoice`).
    public var spec: SpecChoice
    public var clientKey: ClientKeyMode
    /// Event prefix (bird, pusher); nil: detected from the handshake.
    public var prefix: String?
    /// Verifies auth signatures when given; nil leaves `channels.auth-signature` unchecked.
    public var appSecret: String?
    /// Worker threads the clients are spread over (1: the calling thread alone). The report
    /// is the same for any number.
    public var jobs: Int
    public var failOn: FailOn
    /// BPF filter for pcap inputs.
    public var filter: String?
    /// Read the inputs as the replicas of one fleet (`FleetMerge`), with at most `maxSkew`
    /// of clock skew corrected.
    public var merge: Bool
    public var maxSkew: Micros
    /// How much of each client's history the report keeps.
    public var limits: ReportLimits
    /// Show reading progress on standard error when it is a terminal (the CLI does; a
    /// library host does not want its terminal written to).
    public var showsProgress: Bool
    /// The command messages are prefixed with ("faultline analyze").
    public var command: String

    public init(spec: SpecChoice = SpecChoice(), clientKey: ClientKeyMode = .standard, prefix: String? = nil,
                appSecret: String? = nil, jobs: Int = 1, failOn: FailOn = .error, filter: String? = nil,
                merge: Bool = false, maxSkew: Micros = 50_000, limits: ReportLimits = .standard,
                showsProgress: Bool = false, command: String = "faultline analyze") {
        self.spec = spec
        self.clientKey = clientKey
        self.prefix = prefix
        self.appSecret = appSecret
        self.jobs = max(1, jobs)
        self.failOn = failOn
        self.filter = filter
        self.merge = merge
        self.maxSkew = maxSkew
        self.limits = limits
        self.showsProgress = showsProgress
        self.command = command
    }
}

/// The spec an analysis judges by, in order of precedence: a spec already loaded (the
/// demo's), then `named` (`--spec`), then the spec the first input was recorded under
/// (with its values), then the protocol table's detection on the first input. `overrides`
/// (`--pong-timeout` ...) replace single values of whichever spec is chosen.
public struct SpecChoice: Sendable {
    public var loaded: LifecycleSpec?
    public var named: String?
    public var overrides: SpecOverrides

    public init(loaded: LifecycleSpec? = nil, named: String? = nil, overrides: SpecOverrides = SpecOverrides()) {
        self.loaded = loaded
        self.named = named
        self.overrides = overrides
    }

    /// The spec used when none is named, recorded or detected.
    public static let defaultSpec = "bird"

    /// Nothing given: the recorded spec, else detection, decides.
    var givesNone: Bool { loaded == nil && named == nil }
}
