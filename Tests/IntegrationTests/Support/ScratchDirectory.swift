import Foundation

/// A temporary directory for one test, removed when released.
final class ScratchDirectory {
    let path: String

    init(_ label: String = "ot") {
        let base = "/tmp/\(label)-\(UInt32.random(in: 0...UInt32.max))-\(getpid())"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { "\(path)/\(name)" }
}

/// The executables `swift build` put beside the test bundle.
enum Binaries {
    static let directory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (executable as NSString).deletingLastPathComponent
    }()
    static var daemon: String { "\(directory)/offertrackd" }
    static var cli: String { "\(directory)/offertrack" }
}
