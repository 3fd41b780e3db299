// swift-tools-version:6.0
// Faultline: record-and-replay WebSocket proxy and lifecycle analyzer.
// Only the toolchain's modules and Debian's C libraries (see README, "Design").
import PackageDescription

/// Library targets, bottom layer first; a target depends only on targets above it in this
/// list (and on the C libraries). Each dependency list is exactly what the target's files
/// import. Each library has a test target `<Name>Tests` (see `testDependencies`).
///
/// - Vocabulary: the words every layer shares (sides, times, connection ids, seeded
///   randomness, host:port and ws:// URLs, base64, write loops). Imports nothing.
/// - Formats: JSON, the WebSocket protocol, the capture file, the Bird/Pusher protocol
///   (Realtime), pcap decoding. Pure codecs, no sockets.
/// - Engines (sans-IO): fault rules, the lifecycle analyzer, the relay session, replay and
///   the simulator's decisions. Events in, records and commands out.
/// - Shells: sockets and the event loop (Transport), the control API, the command line and
///   report rendering; the `faultline` executable wires them together.
let libraries: [(name: String, dependencies: [Target.Dependency])] = [
    // Vocabulary
    ("Vocabulary", []),
    // Formats
    ("JSON", []),
    ("WebSocket", ["Vocabulary", "COpenSSL", "CZlib"]),
    ("Capture", ["Vocabulary", "JSON", "WebSocket"]),
    ("Realtime", ["JSON", "COpenSSL"]),
    ("Pcap", ["Vocabulary", "JSON", "WebSocket", "Capture", "CPcap"]),
    // Engines
    ("Faults", ["Vocabulary", "JSON", "WebSocket", "Capture"]),
    ("Lifecycle", ["Vocabulary", "JSON", "WebSocket", "Capture", "Realtime"]),
    ("ProxyCore", ["Vocabulary", "WebSocket", "Capture", "Faults"]),
    // Shells
    ("Transport", ["CUV", "COpenSSL"]),
    ("Replay", ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "Transport", "COpenSSL"]),
    ("Sim", ["Vocabulary", "JSON", "WebSocket", "Transport", "COpenSSL"]),
    ("ControlAPI", ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "Transport", "CUV"]),
    ("CLI", ["Vocabulary"]),
    ("Reports", ["Vocabulary", "JSON", "Capture", "Lifecycle", "CLI"]),
]

/// What each test target imports besides its library. `faultline` (the executable) is
/// listed for the suites that run `.build/debug/faultline`: it makes the binary part of
/// what building that test target builds, so they never test a stale one.
let testDependencies: [String: [Target.Dependency]] = [
    "Vocabulary": [],
    "JSON": [],
    "WebSocket": ["Vocabulary", "TestSupport"],
    "Capture": ["Vocabulary", "JSON", "WebSocket", "COpenSSL", "TestSupport", "faultline"],
    "Realtime": ["JSON", "TestSupport"],
    "Pcap": ["Vocabulary", "JSON", "WebSocket", "Capture", "TestSupport", "faultline"],
    "Faults": ["Vocabulary", "JSON", "WebSocket", "Capture"],
    "Lifecycle": ["Vocabulary", "JSON", "WebSocket", "Capture", "Realtime", "TestSupport"],
    "ProxyCore": ["Vocabulary", "WebSocket", "Capture", "Faults"],
    "Transport": ["CUV", "TestSupport"],
    "Replay": ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "TestSupport", "faultline"],
    "Sim": ["Vocabulary", "JSON", "WebSocket", "Transport", "TestSupport", "faultline"],
    "ControlAPI": ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "Transport"],
    "CLI": ["TestSupport"],
    "Reports": ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "TestSupport", "faultline"],
]

/// Release builds of these modules skip Swift's run-time exclusivity checks. Their hot
/// paths mutate class-held state once per packet or frame, and each access check (a
/// thread-local access-set insert) was a fifth of `faultline frames`' instructions on pcap
/// input. Debug builds, which the tests run, keep the checks, so a violation still fails
/// a test.
let uncheckedExclusivityInRelease: Set<String> = ["Pcap"]

let systemLibraries: [Target] = [
    .systemLibrary(name: "CPcap", path: "Sources/CPcap", pkgConfig: "libpcap",
                   providers: [.apt(["libpcap-dev"])]),
    .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                   providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                   providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CUV", path: "Sources/CUV", pkgConfig: "libuv",
                   providers: [.apt(["libuv1-dev"])]),
]

let package = Package(
    name: "Faultline",
    products: [.executable(name: "faultline", targets: ["faultline"])],
    targets: systemLibraries
        + libraries.map {
            // Lifecycle embeds the built-in specs (Specs/*.json) in its code at build time.
            .target(name: $0.name, dependencies: $0.dependencies,
                    swiftSettings: uncheckedExclusivityInRelease.contains($0.name)
                        ? [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))] : nil,
                    plugins: $0.name == "Lifecycle" ? [.plugin(name: "EmbedSpecs")] : nil)
        }
        + libraries.map {
            .testTarget(name: "\($0.name)Tests",
                        dependencies: [.byName(name: $0.name)] + (testDependencies[$0.name] ?? []))
        }
        + [
            // Helpers for tests only: locating the binary and Python, child processes, ports.
            .target(name: "TestSupport"),
            .executableTarget(
                name: "faultline",
                dependencies: libraries.map { .byName(name: $0.name) } + ["COpenSSL"],
                plugins: ["BuildInfo"]),
            // Build-time generators: the built-in specs as Swift literals, the commit for --version.
            .plugin(name: "EmbedSpecs", capability: .buildTool()),
            .plugin(name: "BuildInfo", capability: .buildTool()),
            // libFuzzer targets (Tools/fuzz builds them with --sanitize=fuzzer -DFUZZING); in a
            // normal build, a driver that replays inputs through them (Tools/test's smoke run).
            .executableTarget(
                name: "faultline-fuzz",
                dependencies: ["Vocabulary", "JSON", "WebSocket", "Capture", "Realtime", "Pcap", "Faults", "Lifecycle", "ControlAPI"],
                path: "Sources/Fuzz"),
            // Tests that run the built `faultline` binary against real peers.
            .testTarget(name: "EndToEndTests",
                        dependencies: ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "TestSupport", "faultline"]),
        ],
    swiftLanguageModes: [.v6]
)
