// swift-tools-version:6.0
// An example client test suite using FaultlineKit: the client under test (ReconnectingClient)
// is driven through an in-process recording proxy with a fault rule, and the test asserts
// on the lifecycle findings. Tools/test builds and runs it; run it yourself with
// `swift test` in this folder.
import PackageDescription

let package = Package(
    name: "ClientTests",
    dependencies: [
        // In your project: the path (or URL) of your Faultline checkout.
        .package(name: "Faultline", path: "../.."),
    ],
    targets: [
        .target(name: "ReconnectingClient"),
        .testTarget(name: "ReconnectingClientTests", dependencies: [
            "ReconnectingClient",
            .product(name: "FaultlineKit", package: "Faultline"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
