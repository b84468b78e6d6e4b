import Posix

/// A command's arguments: `--name value`, `--name=value`, flags and positionals, checked against what it takes.
struct CommandArguments {
    private(set) var options: [String: [String]] = [:]
    private(set) var positionals: [String] = []
    private(set) var flags: Set<String> = []

    /// Parses `arguments`; `valued` names the options that take a value, `switches` those that do not.
    init(_ arguments: [String], valued: Set<String>, switches: Set<String> = ["--help"]) throws(CLIError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else {
                positionals.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            if switches.contains(name) && value == nil {
                flags.insert(name)
            } else if valued.contains(name) {
                if value == nil, let next = remaining.first, next.hasPrefix("--") {
                    // `--db --since …`: a forgotten value, not a database named `--since` (`--note=--x` gives one).
                    throw CLIError(
                        .usage,
                        "\(name) needs a value, but \(next) follows it (write \(name)=VALUE for a value that starts with --)"
                    )
                }
                guard let given = value ?? remaining.popFirst() else {
                    throw CLIError(.usage, "\(name) needs a value")
                }
                options[name, default: []].append(given)
            } else {
                throw CLIError(.usage, "unknown option \(argument)")
            }
        }
    }

    /// The last value given for `name`.
    func value(_ name: String) -> String? { options[name]?.last }

    /// Every value given for `name`, in order.
    func values(_ name: String) -> [String] { options[name] ?? [] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}
