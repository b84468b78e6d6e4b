import JournalStore
import OfferTrackDaemon
import OfferTrackDomain
import Posix

/// offertrackd: parse the flags, start, run until SIGTERM; errors map to sysexits codes.
let log = Logger(program: "offertrackd")
let arguments = Array(CommandLine.arguments.dropFirst())

/// The tests' switches, read in debug builds only (`OFFERTRACK_FAULT_HOOKS`, Package.swift); a release build has
/// none. The migration's and the rename's hooks, and the power-loss test's control run: synchronous=OFF, which
/// loses acknowledged records on power loss (deliberately an environment variable, not a flag, and loudly logged).
func applyTestSwitches(_ configuration: inout DaemonConfiguration, _ environment: inout DaemonEnvironment) {
    #if OFFERTRACK_FAULT_HOOKS
        environment.migrationTuning = UserKeysMigrationTuning(CurrentProcess.environment)
        environment.renameTuning = RenameTuning(daemon: CurrentProcess.environment)
        if CurrentProcess.environment("OFFERTRACKD_TEST_ONLY_SYNCHRONOUS_OFF") == "1" {
            configuration.disableSyncForTestsOnly()
            log.warning("TEST ONLY: synchronous=OFF; acknowledged records can be lost")
        }
    #endif
}

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
    // The environment is read here, once; the daemon library never reads it.
    var environment = DaemonEnvironment(
        supervised: CurrentProcess.environment("NOTIFY_SOCKET") != nil,
        walLimitFrames: CurrentProcess.environment("OFFERTRACK_WAL_LIMIT_FRAMES").flatMap { Int($0) }
            ?? DaemonEnvironment.defaultWALLimitFrames)
    applyTestSwitches(&configuration, &environment)
    do {
        let daemon = try Daemon(configuration: configuration, environment: environment, log: log)
        CurrentProcess.exit(daemon.run().rawValue)
    } catch {
        log.error("\(error)")
        CurrentProcess.exit(error.exitCode.rawValue)
    }
}
