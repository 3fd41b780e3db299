// swift-tools-version:6.0
// Faultline: record-and-replay WebSocket proxy and lifecycle analyzer.
// Only the toolchain's modules and Debian's C libraries (see README, "Design").
import PackageDescription

/// Library targets in data-flow order; each has a test target `<Name>Tests`.
let libraries: [(name: String, dependencies: [Target.Dependency])] = [
    ("JSON", []),
    ("WebSocket", ["COpenSSL", "CZlib"]),
    ("Capture", ["WebSocket", "JSON"]),
    ("Realtime", ["JSON", "COpenSSL"]),
    ("Pcap", ["CPcap", "WebSocket", "Capture"]),
    ("Lifecycle", ["Capture", "Realtime", "JSON", "WebSocket"]),
    ("Reports", ["Lifecycle", "JSON", "CLI"]),
    ("Faults", ["WebSocket", "Realtime", "JSON", "Capture"]),
    ("ProxyCore", ["WebSocket", "Capture", "Faults", "Realtime", "JSON"]),
    ("Transport", ["CUV", "COpenSSL"]),
    ("Replay", ["Transport", "Capture", "WebSocket", "JSON", "Realtime", "Lifecycle"]),
    ("Sim", ["Transport", "WebSocket", "Realtime", "JSON"]),
    ("ControlAPI", ["Transport", "WebSocket", "Faults", "Capture", "JSON"]),
    // The proxy's I/O shell: listener, relay pairs, forward mode, recording, live view.
    ("ProxyShell", ["ProxyCore", "ControlAPI", "Transport", "WebSocket", "Capture", "Faults", "Realtime",
                    "Lifecycle", "Reports", "Pcap", "JSON", "CLI"]),
    // `faultline demo`'s scenario and run: sim server, recording proxy with faults, clients.
    ("Demo", ["ProxyShell", "Sim", "Lifecycle", "Reports", "Capture", "Faults", "Transport", "CLI"]),
    // The in-process API for client test suites (the `FaultlineKit` product).
    ("FaultlineKit", ["ProxyShell", "Sim", "Lifecycle", "Capture", "Faults", "Transport"]),
    ("CLI", []),
]

/// Modules a library's tests use beyond the library's own dependencies: the proxy's
/// in-process tests put the simulated Bird server behind it; FaultlineKit's tests decode frames.
let testOnlyDependencies: [String: [Target.Dependency]] = ["ProxyShell": ["Sim"], "FaultlineKit": ["WebSocket"]]

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
    products: [
        .executable(name: "faultline", targets: ["faultline"]),
        // A recording proxy with fault rules inside a Swift test, and the findings of its
        // capture (README, "Testing a client in-process"; Examples/ClientTests).
        .library(name: "FaultlineKit", targets: ["FaultlineKit"]),
    ],
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
                        dependencies: [.byName(name: $0.name), "TestSupport"] + $0.dependencies
                            + (testOnlyDependencies[$0.name] ?? []))
        }
        + [
            // Helpers for tests only: locating the binary and Python, child processes, ports.
            .target(name: "TestSupport"),
            .executableTarget(
                name: "faultline",
                // FaultlineKit is for test suites: the executable uses ProxyShell directly.
                dependencies: libraries.filter { $0.name != "FaultlineKit" }.map { .byName(name: $0.name) },
                plugins: ["BuildInfo"]),
            // Build-time generators: the built-in specs as Swift literals, the commit for --version.
            .plugin(name: "EmbedSpecs", capability: .buildTool()),
            .plugin(name: "BuildInfo", capability: .buildTool()),
            // libFuzzer targets (Tools/fuzz builds them with --sanitize=fuzzer -DFUZZING); in a
            // normal build, a driver that replays inputs through them (Tools/test's smoke run).
            .executableTarget(
                name: "faultline-fuzz",
                dependencies: ["WebSocket", "Capture", "JSON", "Pcap", "Lifecycle", "Faults", "Realtime", "ControlAPI", "ProxyCore", "ProxyShell"],
                path: "Sources/Fuzz"),
            // Tests that run the built `faultline` binary against real peers.
            .testTarget(name: "EndToEndTests", dependencies: ["Capture", "JSON", "WebSocket", "Pcap", "TestSupport"]),
        ],
    swiftLanguageModes: [.v6]
)
