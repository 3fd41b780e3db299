import CLI
import Glibc

/// Where the control API's bearer token comes from, for `proxy` and `ctl` alike: a flag
/// (visible to anyone who can read /proc/PID/cmdline or run `ps`), a file, or the
/// environment variable FAULTLINE_CONTROL_TOKEN (both stay out of the process list).
package enum ControlToken {
    package static let environmentName = "FAULTLINE_CONTROL_TOKEN"

    /// The token from `--FLAG`, `--FLAG-file` or the environment (first given wins, in that
    /// order; giving both flags is an error), or nil when none is. A token must be
    /// non-empty, without spaces or line breaks.
    package static func resolve(_ arguments: ParsedArguments, flag: String, command: String) throws(UsageError) -> String? {
        let fileFlag = flag + "-file"
        let direct = arguments.value(flag)
        let path = arguments.value(fileFlag)
        if direct != nil, path != nil { throw UsageError("\(command): give --\(flag) or --\(fileFlag), not both") }
        let token: String
        let origin: String
        if let direct {
            (token, origin) = (direct, "--\(flag)")
        } else if let path {
            (token, origin) = (try read(path, flag: fileFlag, command: command), "--\(fileFlag) \(path)")
        } else if let value = getenv(environmentName).map({ String(cString: $0) }), !value.isEmpty {
            (token, origin) = (value, environmentName)
        } else {
            return nil
        }
        if token.isEmpty || token.contains(where: { $0 == " " || $0.isNewline }) {
            throw UsageError("\(command): \(origin): the control token must be non-empty, without spaces or line breaks")
        }
        return token
    }

    /// The file's first line, without its line end and surrounding spaces.
    package static func read(_ path: String, flag: String, command: String) throws(UsageError) -> String {
        let text: String
        do { text = try SmallTextFile.read(path) } catch { throw UsageError("\(command): --\(flag) \(error)") }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(line).trimmingCharacters(in: " \t\r")
    }
}
