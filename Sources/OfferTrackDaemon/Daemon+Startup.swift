import AttributionJoin
import JournalStore
import OfferTrackDomain
import Posix

/// Start-up: the journal checked, opened and migrated; the open-file limit raised for `--max-connections`.
extension Daemon {
    /// Checks the journal (`PRAGMA quick_check`), then opens and migrates it and brings its derived tables up to
    /// date. A damaged journal is exit 65, which the unit does not restart: restarting cannot repair it.
    static func openJournal(
        _ configuration: DaemonConfiguration, settings: AttributionSettings, environment: DaemonEnvironment,
        phase: StartupPhase, log: Logger
    ) throws(StartupError) -> JournalWriter {
        let heartbeat = StartupHeartbeat(supervised: environment.supervised, phase: phase, log: log)
        defer { heartbeat.stop() }
        let path = configuration.databasePath
        let restore = "stop offertrackd and restore the latest backup (see docs/operating.md, \"Backups\")"
        do {
            let started = Clock.monotonicMilliseconds()
            heartbeat.enter("checking the journal (quick_check)")
            if let problems = try JournalOpening.quickCheck(path: path) {
                throw StartupError(
                    exitCode: .dataError, "the journal \(path) is corrupt (quick_check: \(problems)): \(restore)")
            }
            log.info(
                "quick_check of \(path): ok in \(Clock.monotonicMilliseconds() - started) ms")
            heartbeat.enter("opening the journal (migrating it when older)")
            let options = JournalWriter.Options(
                durability: configuration.durability, schema: .migrate,
                maintainsDerivedTables: !configuration.journalOnly, checkpointsOnCommit: false,
                partitionsTotal: configuration.forwardServers.isEmpty ? nil : configuration.partitionsTotal,
                migrationLog: log)
            let writer = try JournalWriter(
                path: path, options: options, settings: settings,
                tuning: .init(migration: environment.migrationTuning, renames: environment.renameTuning))
            if configuration.journalOnly { try writer.invalidateDerivedTables() }
            if let taken = writer.savedSummariesTaken {
                log.info(
                    "the join took \(taken.count) returning users' summaries saved at the last stop "
                        + "(\(taken.milliseconds) ms)")
            } else if !configuration.journalOnly {
                log.info("no summaries saved at the last stop: each returning user's first records read their history")
            }
            return writer
        } catch let error as StartupError {
            throw error
        } catch {
            if let details = JournalOpening.corruption(in: error) {
                throw StartupError(exitCode: .dataError, "the journal \(path) is corrupt (\(details)): \(restore)")
            }
            throw StartupError(exitCode: .cannotCreate, "cannot open the journal \(path): \(error)")
        }
    }

    /// Raises the soft open-file limit (1024 under systemd by default) to what `--max-connections` needs.
    func raiseDescriptorLimit() {
        let wanted = UInt64(configuration.maxConnections) + Self.spareDescriptors
        let granted = ResourceLimits.raiseOpenFiles(to: wanted)
        if granted < wanted {
            log.warning("the open-file limit is \(granted), below the \(wanted) that --max-connections needs")
        }
    }
}
