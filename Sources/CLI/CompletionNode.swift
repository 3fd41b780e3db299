/// A command of the tree with the words that reach it: `["sim", "server"]`.
struct CompletionNode {
    var path: [String]
    var spec: CommandSpec

    /// Every command below `root` (not `root` itself), depth first, in declaration order.
    static func all(under root: CommandSpec, path: [String] = []) -> [CompletionNode] {
        root.subcommands.flatMap { sub in
            [CompletionNode(path: path + [sub.name], spec: sub)] + all(under: sub, path: path + [sub.name])
        }
    }

    /// Flags and options, each with its `-x` alias, plus `--help`.
    var optionWords: [String] {
        spec.options.flatMap { option in (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.name)"] } + ["--help"]
    }
}
