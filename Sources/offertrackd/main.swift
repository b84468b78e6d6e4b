import Journal
import OfferTrackDaemon
import OfferTrackDomain
import Posix

/// offertrackd: parse the flags, start, run until SIGTERM; errors map to sysexits codes.
let arguments = Array(CommandLine.arguments.dropFirst())
switch Result(catching: { () throws(UsageError) in
    try DaemonConfiguration.parse(arguments, stateDirectory: ProcessInfo.environment("STATE_DIRECTORY"))
}) {
case .failure(let error):
    FileDescriptor.printError("offertrackd: \(error)\n\(DaemonConfiguration.usage)")
    ProcessInfo.exit(64)
case .success(.help):
    try? FileDescriptor.writeAll(1, Array((DaemonConfiguration.usage + "\n").utf8))
case .success(.version):
    try? FileDescriptor.writeAll(1, Array((VersionLine.text(program: "offertrackd") + "\n").utf8))
case .success(.run(let configuration)):
    do {
        let daemon = try Daemon(configuration: configuration)
        ProcessInfo.exit(daemon.run())
    } catch {
        FileDescriptor.printError("offertrackd: \(error)")
        ProcessInfo.exit(error.exitCode)
    }
}
