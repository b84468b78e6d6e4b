import AttributionJoin
import Fleet
import Posix

/// The daemon's edge or central side (SPEC section 10): the forwarder (edge) or the consumer (central) built on
/// the same stream settings, the fleet the journal belongs to checked at start, and what `STATUS=` and the
/// metrics say about them. Neither for a daemon that is not part of a fleet.
struct DaemonFleet: Sendable {
    /// Edge mode: the forwarder to the stream.
    let forwarder: EdgeForwarder?
    /// Central mode: the consumer of this journal's partitions.
    let consumer: CentralConsumer?

    /// The consumer (central mode) or the forwarder (edge mode), or neither. A stream that answers now and
    /// records another P is refused (exit 78); one that does not answer is checked again once it does.
    init(_ configuration: DaemonConfiguration, pipeline: CommitPipeline, log: Logger) throws(StartupError) {
        let stream = Self.stream(configuration)
        do {
            if !configuration.consumeServers.isEmpty {
                consumer = try CentralConsumer(
                    servers: configuration.consumeServers, stream: stream, partitions: configuration.partitions,
                    commitRecords: configuration.consumeBatch,
                    commit: { [pipeline] submissions in try pipeline.stream.commit(submissions) },
                    record: { [pipeline] lag, report in _ = try? pipeline.runOnWriter { try $0.record(lag, report) } },
                    sharedUsers: { [pipeline] in pipeline.sharedUsers }, log: log)
                forwarder = nil
            } else if !configuration.forwardServers.isEmpty {
                forwarder = try EdgeForwarder(
                    journalPath: configuration.databasePath, servers: configuration.forwardServers, stream: stream,
                    erasureOriginals: pipeline.erasureOriginals, logger: log)
                consumer = nil
            } else {
                forwarder = nil
                consumer = nil
            }
        } catch let mismatch as FleetStream.Mismatch {
            throw StartupError(exitCode: .configuration, "\(mismatch)")
        } catch {
            let flag = configuration.consumeServers.isEmpty ? "--forward" : "--consume"
            throw StartupError(exitCode: .unavailable, "\(flag): \(error)")
        }
    }

    /// The stream as the flags describe it.
    static func stream(_ configuration: DaemonConfiguration) -> FleetStream {
        FleetStream(
            name: configuration.streamName, partitionsTotal: configuration.partitionsTotal,
            replicas: configuration.streamReplicas, maxMegabytes: configuration.streamMaxMegabytes)
    }

    /// An edge's or a central's journal records its stream and P at the first start and refuses others after;
    /// a central's its partitions too (exit 78, naming both values).
    static func claim(_ writer: JournalWriter, _ configuration: DaemonConfiguration) throws {
        let isCentral = !configuration.consumeServers.isEmpty
        guard isCentral || !configuration.forwardServers.isEmpty else { return }
        do {
            try writer.claim(
                FleetIdentity(stream: configuration.streamName, partitionsTotal: configuration.partitionsTotal))
            if isCentral {
                try writer.claim(
                    FleetMembership(partitions: configuration.partitions, total: configuration.partitionsTotal))
            }
        } catch let mismatch as FleetIdentity.Mismatch {
            throw StartupError(exitCode: .configuration, "\(mismatch)")
        } catch let mismatch as FleetMembership.Mismatch {
            throw StartupError(exitCode: .configuration, "\(mismatch)")
        }
    }

    func start() {
        forwarder?.start()
        consumer?.start()
    }

    func stop() {
        forwarder?.stop()
        consumer?.stop()
    }

    /// What the metrics say about the stream; nil for a daemon that is neither an edge nor a central one.
    var metrics: FleetMetrics? {
        if let consumer {
            let progress = consumer.progress
            return FleetMetrics(
                streamUp: consumer.health.isUp, forwardLag: nil, consumeLag: Int64(progress.lagRecords),
                invalid: progress.invalid, conflicts: progress.conflicts, wrongPartition: progress.wrongPartition,
                expired: progress.expired)
        }
        guard let forwarder else { return nil }
        return FleetMetrics(
            streamUp: forwarder.health.isUp, forwardLag: forwarder.progress.lagRecords, consumeLag: nil, invalid: 0,
            conflicts: 0, wrongPartition: 0, expired: 0)
    }

    /// The fleet's part of `STATUS=`: progress, refusals and, first, a problem that keeps the stream from working.
    var statusPart: String {
        var line = ""
        if let problem = (consumer?.health ?? forwarder?.health)?.state.problem {
            line += "; STREAM DOWN: \(problem)"
        }
        if let progress = consumer?.progress {
            line +=
                "; consumed \(progress.accepted) (\(progress.duplicates) duplicate, \(progress.conflicts) conflicting, "
                + (progress.expired > 0 ? "\(progress.expired) before the acceptance horizon, " : "")
                + "\(progress.invalid) invalid, \(progress.wrongPartition) of other partitions refused), "
                + "lag \(progress.lagRecords) records"
        }
        if let progress = forwarder?.progress {
            line += "; forwarded through seq \(progress.acknowledgedThrough), lag \(progress.lagRecords) records"
        }
        return line
    }
}

/// The fleet's metrics at one scrape.
struct FleetMetrics {
    let streamUp: Bool
    let forwardLag: Int64?
    let consumeLag: Int64?
    let invalid: Int
    let conflicts: Int
    let wrongPartition: Int
    let expired: Int
}
