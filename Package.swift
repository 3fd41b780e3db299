// swift-tools-version:6.0
// Faultline: record-and-replay WebSocket proxy and lifecycle analyzer.
// Only the toolchain's modules and Debian's C libraries (see README, "Design").
import PackageDescription

/// Library targets in data-flow order; each has a test target `<Name>Tests`. The protocol
/// table's targets live under Sources/Protocols: the interface every entry implements, one
/// module per wire protocol (Bird/Pusher), and the table that registers them.
let libraries: [(name: String, dependencies: [Target.Dependency], path: String?)] = [
    ("JSON", [], nil),
    ("WebSocket", ["COpenSSL", "CZlib"], nil),
    ("Protocols", ["JSON", "WebSocket"], "Sources/Protocols/Interface"),
    ("Bird", ["Protocols", "JSON", "WebSocket", "COpenSSL"], "Sources/Protocols/Bird"),
    ("ProtocolTable", ["Protocols", "Bird"], "Sources/Protocols/Table"),
    ("Capture", ["WebSocket", "JSON", "Protocols", "CZstd", "CZlib"], nil),
    ("Pcap", ["CPcap", "WebSocket", "Capture"], nil),
    ("Lifecycle", ["Capture", "Protocols", "ProtocolTable", "Bird", "JSON", "WebSocket"], nil),
    ("Reports", ["Lifecycle", "JSON", "CLI"], nil),
    ("Faults", ["WebSocket", "Bird", "JSON", "Capture"], nil),
    ("ProxyCore", ["WebSocket", "Capture", "Faults", "Protocols", "ProtocolTable", "JSON"], nil),
    ("Transport", ["CUV", "COpenSSL"], nil),
    ("Replay", ["Transport", "Capture", "WebSocket", "JSON", "Protocols", "Lifecycle"], nil),
    ("Sim", ["Transport", "WebSocket", "Bird", "JSON"], nil),
    ("ControlAPI", ["Transport", "WebSocket", "Faults", "Capture", "JSON"], nil),
    // The proxy's I/O shell: listener, relay pairs, forward mode, recording, live view.
    ("ProxyShell", ["ProxyCore", "ControlAPI", "Transport", "WebSocket", "Capture", "Faults", "Bird",
                    "Lifecycle", "Reports", "Pcap", "JSON", "CLI"], nil),
    // The in-process API for client test suites (the `FaultlineKit` product).
    ("FaultlineKit", ["ProxyShell", "Sim", "Lifecycle", "Capture", "Faults", "Transport"], nil),
    ("CLI", [], nil),
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
    .systemLibrary(name: "CZstd", path: "Sources/CZstd", pkgConfig: "libzstd",
                   providers: [.apt(["libzstd-dev"])]),
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
            .target(name: $0.name, dependencies: $0.dependencies, path: $0.path,
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
                dependencies: ["WebSocket", "Capture", "JSON", "Pcap", "Lifecycle", "Faults", "Protocols", "Bird", "ControlAPI", "ProxyCore", "ProxyShell"],
                path: "Sources/Fuzz"),
            // Tests that run the built `faultline` binary against real peers.
            .testTarget(name: "EndToEndTests", dependencies: ["Capture", "JSON", "WebSocket", "Pcap", "TestSupport"]),
        ],
    swiftLanguageModes: [.v6]
)
