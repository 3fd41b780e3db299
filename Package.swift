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
/// - Formats: JSON, the WebSocket protocol, the protocol table with Bird/Pusher, the
///   capture file, pcap decoding. Pure codecs, no sockets.
/// - Engines (sans-IO): fault rules, the lifecycle analyzer, the relay session, replay and
///   the simulator's decisions. Events in, records and commands out.
/// - Shells: sockets and the event loop (Transport), the command line, the control API,
///   opening inputs (Inputs), report and frame rendering, the proxy's I/O shell
///   (ProxyShell) and the in-process API (FaultlineKit); the `faultline` executable wires
///   them together, one file per command.
let libraries: [(name: String, dependencies: [Target.Dependency], path: String?)] = [
    // Vocabulary
    ("Vocabulary", [], nil),
    // Formats
    ("JSON", ["Vocabulary"], nil),
    ("WebSocket", ["Vocabulary", "COpenSSL", "CZlib"], nil),
    // The protocol table (Sources/Protocols): the interface every wire protocol implements,
    // one module per protocol (Bird/Pusher), and the table that registers them by key.
    ("Protocols", ["JSON", "WebSocket"], "Sources/Protocols/Interface"),
    ("Bird", ["JSON", "WebSocket", "Protocols", "COpenSSL"], "Sources/Protocols/Bird"),
    ("SocketIO", ["JSON", "WebSocket", "Protocols"], "Sources/Protocols/SocketIO"),
    ("GraphQLWS", ["JSON", "Protocols"], "Sources/Protocols/GraphQLWS"),
    ("SignalR", ["JSON", "Protocols"], "Sources/Protocols/SignalR"),
    ("Phoenix", ["JSON", "Protocols"], "Sources/Protocols/Phoenix"),
    ("ProtocolTable", ["Protocols", "Bird", "SocketIO", "GraphQLWS", "SignalR", "Phoenix"], "Sources/Protocols/Table"),
    ("Capture", ["Vocabulary", "JSON", "WebSocket", "Protocols", "CZlib", "CZstd"], nil),
    ("Pcap", ["Vocabulary", "JSON", "WebSocket", "Capture", "CPcap", "CMalloc"], nil),
    // Engines
    ("Faults", ["Vocabulary", "JSON", "WebSocket", "Protocols", "Capture"], nil),
    ("Lifecycle", ["Vocabulary", "JSON", "WebSocket", "Protocols", "ProtocolTable", "Capture"], nil),
    ("ProxyCore", ["Vocabulary", "WebSocket", "Protocols", "ProtocolTable", "Capture", "Faults"], nil),
    // Shells
    ("Transport", ["COpenSSL", "CUV"], nil),
    ("Replay", ["Vocabulary", "JSON", "WebSocket", "Protocols", "ProtocolTable", "Capture", "Lifecycle", "Analysis", "Transport"], nil),
    ("Sim", ["Vocabulary", "JSON", "WebSocket", "Protocols", "Bird", "SocketIO", "GraphQLWS", "SignalR", "Phoenix", "Transport"], nil),
    ("CLI", ["Vocabulary"], nil),
    ("ControlAPI", ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "ProxyCore", "Transport", "CLI", "CUV"], nil),
    // Opening any input by its first bytes (capture, pcap/pcapng, zstd/gzip), rotated
    // recordings' parts, a capture still being written, standard input kept for rereading.
    ("Inputs", ["Vocabulary", "Capture", "Pcap", "CLI"], nil),
    ("Reports", ["Vocabulary", "JSON", "WebSocket", "Protocols", "Capture", "Lifecycle", "CLI", "CMalloc"], nil),
    // One analysis run (inputs, spec, options -> events and a report) for the CLI, the demo,
    // FaultlineKit; the sharded engine (`--jobs`).
    ("Analysis", ["Vocabulary", "Capture", "Protocols", "ProtocolTable", "Lifecycle", "CLI", "Inputs", "Reports"], nil),
    // The web UI (`proxy --ui`, `faultline ui`): embedded page, live update hub, actions
    // through the control API's one contract.
    ("UI", ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "Lifecycle", "Reports", "Transport", "ControlAPI"], nil),
    // The proxy's I/O shell: listener, relay pairs, forward mode, recording, live view.
    ("ProxyShell", ["Vocabulary", "JSON", "WebSocket", "Protocols", "ProtocolTable", "Capture", "Faults", "Lifecycle", "Analysis", "ProxyCore", "Transport", "CLI", "ControlAPI", "Reports"], nil),
    // `faultline demo`'s scenario and run: sim server, recording proxy with faults, clients.
    ("Demo", ["Vocabulary", "Capture", "Faults", "Lifecycle", "Transport", "Sim", "CLI", "Reports", "ProxyShell"], nil),
    // The in-process API for client test suites (the `FaultlineKit` product).
    ("FaultlineKit", ["Vocabulary", "JSON", "Capture", "Faults", "Lifecycle", "Transport", "Sim", "ProxyShell", "CLI", "Reports", "Analysis"], nil),
]

/// What each test target imports besides its library. `faultline` (the executable) is
/// listed for the suites that run `.build/debug/faultline`: it makes the binary part of
/// what building that test target builds, so they never test a stale one.
let testDependencies: [String: [Target.Dependency]] = [
    "Vocabulary": [],
    "JSON": [],
    "WebSocket": ["Vocabulary", "TestSupport"],
    "Protocols": ["JSON"],
    "Bird": ["Vocabulary", "JSON", "WebSocket", "Protocols", "Capture", "TestSupport"],
    "GraphQLWS": ["JSON", "WebSocket", "Protocols", "ProtocolTable"],
    "SignalR": ["JSON", "Protocols", "ProtocolTable"],
    "Phoenix": ["JSON", "Protocols"],
    "SocketIO": ["JSON", "Protocols", "ProtocolTable"],
    "ProtocolTable": ["Protocols", "Bird", "TestSupport"],
    "Capture": ["Vocabulary", "JSON", "WebSocket", "COpenSSL", "TestSupport", "faultline"],
    "Pcap": ["Vocabulary", "JSON", "WebSocket", "Capture", "TestSupport", "faultline"],
    "Faults": ["Vocabulary", "JSON", "WebSocket", "Protocols", "ProtocolTable", "Capture"],
    "Lifecycle": ["Vocabulary", "JSON", "WebSocket", "Bird", "Capture", "TestSupport"],
    "ProxyCore": ["Vocabulary", "JSON", "WebSocket", "Protocols", "ProtocolTable", "Capture", "Faults", "Lifecycle"],
    "Transport": ["CUV", "TestSupport"],
    "Replay": ["Vocabulary", "JSON", "WebSocket", "Protocols", "Bird", "Capture", "Lifecycle", "TestSupport", "faultline"],
    "Sim": ["Vocabulary", "JSON", "WebSocket", "Bird", "Transport", "TestSupport", "faultline"],
    "ControlAPI": ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "ProxyCore", "Transport"],
    "CLI": ["TestSupport"],
    "Inputs": ["Vocabulary", "JSON", "WebSocket", "Capture", "CLI", "Pcap"],
    "Reports": ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "TestSupport", "faultline"],
    "Analysis": ["Vocabulary", "WebSocket", "Capture", "Lifecycle", "Reports", "TestSupport", "faultline"],
    "ProxyShell": ["Vocabulary", "WebSocket", "Protocols", "ProtocolTable", "Capture", "Lifecycle", "ProxyCore", "Transport", "Sim", "ControlAPI", "TestSupport"],
    "FaultlineKit": ["WebSocket", "Faults", "TestSupport"],
    "Demo": ["Faults", "TestSupport"],
    "UI": ["Vocabulary", "JSON", "WebSocket", "Capture", "Faults", "Lifecycle", "Reports", "Transport", "ControlAPI", "TestSupport", "faultline"],
]

let systemLibraries: [Target] = [
    .systemLibrary(name: "CPcap", path: "Sources/CPcap", pkgConfig: "libpcap",
                   providers: [.apt(["libpcap-dev"])]),
    .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                   providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                   providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CUV", path: "Sources/CUV", pkgConfig: "libuv",
                   providers: [.apt(["libuv1-dev"])]),
    .systemLibrary(name: "CZstd", path: "Sources/CZstd", pkgConfig: "libzstd",
                   providers: [.apt(["libzstd-dev"])]),
    // glibc's <malloc.h> (part of libc): the executable fixes its mmap threshold.
    .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
    // glibc's posix_spawn close-from and chdir file actions (part of libc): TestSupport
    // starts test children with them.
    .systemLibrary(name: "CSpawn", path: "Sources/CSpawn"),
]

let package = Package(
    name: "Faultline",
    products: [
        .executable(name: "faultline", targets: ["faultline"]),
        // A recording proxy with fault rules inside a Swift test, and the findings of its
        // capture (README, "Testing a client in-process"; Examples/ClientTests).
        .library(name: "FaultlineKit", targets: ["FaultlineKit"]),
    ],
    targets: systemLibraries
        + libraries.map {
            // Lifecycle embeds the built-in specs (Specs/*.json) in its code at build time, UI
            // its page (Assets/*).
            .target(name: $0.name, dependencies: $0.dependencies, path: $0.path,
                    exclude: $0.name == "UI" ? ["Assets"] : [],
                    plugins: $0.name == "Lifecycle" ? [.plugin(name: "EmbedSpecs")]
                        : $0.name == "UI" ? [.plugin(name: "EmbedAssets")] : nil)
        }
        + libraries.map {
            .testTarget(name: "\($0.name)Tests",
                        dependencies: [.byName(name: $0.name)] + (testDependencies[$0.name] ?? []))
        }
        + [
            // Helpers for tests only: locating the binary and Python, child processes, ports.
            .target(name: "TestSupport", dependencies: ["CSpawn"]),
            .executableTarget(
                name: "faultline",
                // FaultlineKit is for test suites: the executable uses ProxyShell directly.
                dependencies: libraries.filter { $0.name != "FaultlineKit" }.map { .byName(name: $0.name) } + ["CMalloc"],
                plugins: ["BuildInfo"]),
            // Build-time generators: the built-in specs and the web UI's files as Swift literals,
            // the commit for --version.
            .plugin(name: "EmbedSpecs", capability: .buildTool()),
            .plugin(name: "EmbedAssets", capability: .buildTool()),
            .plugin(name: "BuildInfo", capability: .buildTool()),
            // libFuzzer targets (Tools/fuzz builds them with --sanitize=fuzzer -DFUZZING); in a
            // normal build, a driver that replays inputs through them (Tools/test's smoke run).
            .executableTarget(
                name: "faultline-fuzz",
                dependencies: ["Vocabulary", "JSON", "WebSocket", "Protocols", "Bird", "Capture", "Pcap", "Faults", "Lifecycle",
                               "ProxyCore", "ProxyShell", "ControlAPI", "Replay", "CLI", "Reports"],
                path: "Sources/Fuzz"),
            // Tests that run the built `faultline` binary against real peers.
            .testTarget(name: "EndToEndTests",
                        dependencies: ["Vocabulary", "JSON", "WebSocket", "Capture", "Lifecycle", "TestSupport", "faultline"]),
        ],
    swiftLanguageModes: [.v6]
)
