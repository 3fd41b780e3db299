import CLI

/// Subcommands whose issues have not landed yet. They say so and exit 1; none pretends to work.
enum NotBuilt {
    static func run(_ name: String) -> Int32 {
        Console.err("faultline \(name): not built yet in this version\n")
        return ExitStatus.failure
    }
}
