import Foundation
import TestSupport

/// Headless Chromium (Debian's `chromium`) rendering a local page, in a network namespace of its own so that
/// nothing it tries can leave the machine; what the page asked for is read from Chromium's net log.
struct Chromium {
    static let executable = "/usr/bin/chromium"

    /// What one rendering produced.
    struct Rendering {
        /// The screenshot.
        let png: Data
        /// The page's DOM after loading.
        let dom: String
        /// Lines Chromium logged from the page's console (not from Chromium's own pages, `chrome://…`).
        let console: [String]
        /// Every URL requested (scheme, host and path, query dropped), file URLs excluded.
        let requests: Set<String>
    }

    static func render(_ path: String, in directory: ScratchDirectory, width: Int = 1000, height: Int = 2400) throws
        -> Rendering
    {
        let png = directory.file("page-\(UUID().uuidString).png")
        let netLog = directory.file("net-\(UUID().uuidString).json")
        let common = [
            "-n", executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
            "--disable-extensions", "--user-data-dir=\(directory.file("profile"))",
        ]
        let url = URL(fileURLWithPath: path).absoluteString
        let shot = try Shell.run(
            "/usr/bin/unshare",
            common + [
                "--enable-logging=stderr", "--v=0", "--log-net-log=\(netLog)", "--window-size=\(width),\(height)",
                "--screenshot=\(png)", url,
            ])
        guard shot.status == 0 else { throw ToolFailure("chromium exited \(shot.status): \(shot.output)") }
        let dump = try Shell.run("/usr/bin/unshare", common + ["--dump-dom", url])
        guard dump.status == 0 else { throw ToolFailure("chromium --dump-dom exited \(dump.status)") }
        let log = (try? String(contentsOfFile: netLog, encoding: .utf8)) ?? ""
        return Rendering(
            png: try Data(contentsOf: URL(fileURLWithPath: png)),
            dom: dump.output,
            console: Self.pageConsoleLines(shot.output),
            requests: Self.urls(inNetLog: log))
    }

    /// What `expression` evaluates to in the page at `path` once loaded in a `width` × `height` window, decoded
    /// from JSON. `Tests/Tools/chromium-evaluate` evaluates it through the DevTools protocol, so the page itself
    /// runs no script; in a network namespace of its own, as `render`.
    static func evaluate<Value: Decodable>(
        _ expression: String, as: Value.Type, in path: String, directory: ScratchDirectory, width: Int = 1280,
        height: Int = 900
    ) throws -> Value {
        let outcome = try Shell.run(
            "/usr/bin/unshare",
            [
                "-n", "/usr/bin/python3", Repository.file("Tests/Tools/chromium-evaluate"),
                directory.file("profile-evaluate"), String(width), String(height),
                URL(fileURLWithPath: path).absoluteString, expression,
            ])
        guard outcome.status == 0 else {
            throw ToolFailure("chromium-evaluate exited \(outcome.status): \(outcome.output)")
        }
        return try JSONDecoder().decode(Value.self, from: Data(outcome.output.utf8))
    }

    /// The console lines of Chromium's log (`[…:INFO:CONSOLE:N] "message", source: URL (N)`) that come from the
    /// page, not from Chromium's own pages: a loaded machine makes its internal UI log "Slow network is detected"
    /// from `chrome://resources`, which says nothing about the page.
    static func pageConsoleLines(_ log: String) -> [String] {
        log.split(separator: "\n").filter { line in
            guard line.contains(":CONSOLE") else { return false }
            guard let source = line.range(of: ", source: ", options: .backwards) else { return true }
            let url = line[source.upperBound...]
            return !url.hasPrefix("chrome://") && !url.hasPrefix("chrome-untrusted://") && !url.hasPrefix("devtools://")
        }.map(String.init)
    }

    /// The `"url":"…"` values of a net log, without their query strings, file URLs left out.
    static func urls(inNetLog log: String) -> Set<String> {
        var found: Set<String> = []
        var rest = Substring(log)
        while let range = rest.range(of: "\"url\":\"") {
            rest = rest[range.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { break }
            let url = rest[..<end].split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
            if !url.hasPrefix("file:") { found.insert(url) }
            rest = rest[end...]
        }
        return found
    }
}

struct ToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
