import TestSupport

/// `curl`, silent but for errors, giving up after 5 s: the tests' HTTP client.
enum Curl {
    static func run(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "5"] + arguments)
    }
}
