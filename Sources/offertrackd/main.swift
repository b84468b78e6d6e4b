import Journal
import OfferTrackDaemon
import OfferTrackDomain
import Posix

/// offertrackd: parse the flags, start, run until SIGTERM; errors map to sysexits codes.
let arguments = Array(CommandLine.arguments.dropFirst())
switch Result(catching: { () throws(UsageError) in
    try DaemonConfiguration.parse(arguments, stateDirectory: CurrentProcess.environment("STATE_DIRECTORY"))
}) {
case .failure(let error):
    FileDescriptor.printError("offertrackd: \(error)\n\(DaemonConfiguration.usage)")
    CurrentProcess.exit(ExitCode.usage.rawValue)
case .success(.help):
    try? FileDescriptor.writeAll(1, Array((DaemonConfiguration.usage + "\n").utf8))
case .success(.version):
    try? FileDescriptor.writeAll(1, Array((VersionLine.text(program: "offertrackd") + "\n").utf8))
case .success(.run(var configuration)):
    // FOR TESTS ONLY (the power-loss test's control run): synchronous=OFF, which loses acknowledged records on
    // power loss. Deliberately an environment variable, not a flag, and loudly logged.
    if CurrentProcess.environment("OFFERTRACKD_TEST_ONLY_SYNCHRONOUS_OFF") == "1" {
        configuration.disableSyncForTestsOnly()
        FileDescriptor.printError("offertrackd: TEST ONLY: synchronous=OFF; acknowledged records can be lost")
    }
    // Tests' hooks and tuning of schema 8's migration: read here, the one place the daemon reads them.
    configuration.migrationTuning = UserKeysMigrationTuning(CurrentProcess.environment)
    do {
        let daemon = try Daemon(configuration: configuration)
        CurrentProcess.exit(daemon.run().rawValue)
    } catch {
        FileDescriptor.printError("offertrackd: \(error)")
        CurrentProcess.exit(error.exitCode.rawValue)
    }
}
