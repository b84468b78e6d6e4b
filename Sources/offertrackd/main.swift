import Journal
import OfferTrackDaemon
import OfferTrackDomain
import Posix

/// offertrackd: parse the flags, start, run until SIGTERM; errors map to sysexits codes.
let log = Logger(program: "offertrackd")
let arguments = Array(CommandLine.arguments.dropFirst())
switch Result(catching: { () throws(UsageError) in
    try DaemonConfiguration.parse(arguments, stateDirectory: CurrentProcess.environment("STATE_DIRECTORY"))
}) {
case .failure(let error):
    log.error("\(error)")
    FileDescriptor.printError(DaemonConfiguration.usage)
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
        log.warning("TEST ONLY: synchronous=OFF; acknowledged records can be lost")
    }
    // The environment is read here, once; the daemon library never reads it.
    let environment = DaemonEnvironment(
        supervised: CurrentProcess.environment("NOTIFY_SOCKET") != nil,
        walLimitFrames: CurrentProcess.environment("OFFERTRACK_WAL_LIMIT_FRAMES").flatMap { Int($0) }
            ?? DaemonEnvironment.defaultWALLimitFrames,
        migrationTuning: UserKeysMigrationTuning(CurrentProcess.environment),
        renameTuning: RenameTuning(daemon: CurrentProcess.environment))
    do {
        let daemon = try Daemon(configuration: configuration, environment: environment, log: log)
        CurrentProcess.exit(daemon.run().rawValue)
    } catch {
        log.error("\(error)")
        CurrentProcess.exit(error.exitCode.rawValue)
    }
}
