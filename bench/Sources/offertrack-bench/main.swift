import Foundation
import Posix

/// offertrack-bench: baselines, end-to-end ingest and latency, JSON cost and footprint, as one markdown report.
do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    let markdown = try BenchRun(options: options).run()
    try FileDescriptor.writeAll(1, Array(markdown.utf8))
    if let path = options.outputPath {
        try markdown.write(toFile: path, atomically: true, encoding: .utf8)
    }
} catch let failure as BenchFailure {
    FileDescriptor.printError(failure.exitCode == 0 ? failure.description : "offertrack-bench: \(failure)")
    exit(failure.exitCode)
} catch {
    FileDescriptor.printError("offertrack-bench: \(error)")
    exit(1)
}
