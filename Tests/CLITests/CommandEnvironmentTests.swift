import JournalStore
import PublishedLedger
import Testing

@testable import OfferTrackCLI

/// What `offertrack`'s main reads from the environment and passes down (issue #33): the commands read none.
@Suite struct CommandEnvironmentTests {
    @Test func theVariablesBecomeValues() {
        let variables = [
            "STATE_DIRECTORY": "/var/lib/x", "OFFERTRACK_SOCKET": "/run/x.sock",
            "OFFERTRACK_TEST_EXPORT_KILL_AFTER_CHUNK": "3", "OFFERTRACK_TEST_EXPORT_PART_BYTES": "0",
            "OFFERTRACK_TEST_MIGRATION_USERS_PER_STEP": "5",
        ]
        let environment = CommandEnvironment { variables[$0] }
        #expect(Paths.database(nil, environment) == "/var/lib/x/offertrack.db")
        #expect(Paths.database("given.db", environment) == "given.db")
        #expect(Paths.socket(nil, environment) == "/run/x.sock")
        #if OFFERTRACK_FAULT_HOOKS
            #expect(environment.exportHooks.killAfterChunk == 3 && environment.exportHooks.partBytes == 1)
            #expect(environment.exportHooks.pauseAfterChunk == nil && environment.exportHooks.entries == nil)
            #expect(environment.migrationTuning.usersPerStep == 5 && environment.migrationTuning.killAfterStep == nil)
        #else
            // A release build has no hooks: the variables change nothing.
            #expect(environment.migrationTuning.usersPerStep == 100_000)
        #endif
    }

    @Test func withoutVariablesTheDefaults() {
        let environment = CommandEnvironment { _ in nil }
        #expect(Paths.database(nil, environment) == "./offertrack.db")
        #expect(Paths.socket(nil, environment) == "./offertrack.sock")
        #expect(environment.migrationTuning.usersPerStep == 100_000)
    }
}
