import Foundation

/// `EmbedSpecsTool OUTPUT.swift FILE.json...`: writes a Swift source holding each JSON file
/// as a string literal, so the built-in specs are part of the binary and it runs from any
/// directory. Run by the `EmbedSpecs` build-tool plugin at build time; the files stay the
/// one source of truth, and a test checks the embedded copies equal them.

/// A Swift string literal of `text`, escaped so it holds exactly these characters.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EmbedSpecsTool: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else { fail("usage: EmbedSpecsTool OUTPUT.swift FILE.json...") }
var entries: [(name: String, text: String)] = []
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    guard let data = FileManager.default.contents(atPath: path) else { fail("\(path): cannot read") }
    // JSON files are UTF-8; a file that is not cannot be embedded byte for byte as a String.
    guard let text = String(data: data, encoding: .utf8), Data(text.utf8) == data else {
        fail("\(path): not valid UTF-8")
    }
    entries.append((url.deletingPathExtension().lastPathComponent, text))
}
entries.sort { $0.name < $1.name }

var source = """
    // Generated at build time by EmbedSpecsTool from Sources/Lifecycle/Specs/*.json: do not edit.

    /// The built-in specs, each JSON file's text under its name (the file name without
    /// `.json`), in name order.
    enum EmbeddedSpecs {
        static let files: [(name: String, text: String)] = [

    """
for entry in entries {
    source += "        (\(literal(entry.name)), \(literal(entry.text))),\n"
}
source += "    ]\n}\n"
// Rewriting an unchanged file would make every build recompile the module.
if FileManager.default.contents(atPath: output) != Data(source.utf8) {
    do { try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
        fail("\(output): \(error)")
    }
}
