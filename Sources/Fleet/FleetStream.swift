import NATS
import OfferTrackDomain

/// The fleet's one stream (SPEC section 10) as every daemon and `offertrack forward` creates and checks it: its
/// name, P (recorded in the stream's description, so that a daemon with another P finds the difference), the
/// replicas and the size limit.
public struct FleetStream: Sendable, Equatable {
    public let name: String
    /// P, the fleet's number of partitions.
    public let partitionsTotal: Int
    public let replicas: Int
    /// The size limit asked for in MiB; nil: as large as the cluster can place, up to `defaultMegabytes`.
    public let maxMegabytes: Int?

    /// The largest size tried when none is given, and the smallest the halving goes down to.
    public static let defaultMegabytes = 10_240
    static let smallestMegabytes = 64
    /// How long the stream remembers message ids (an edge's resend after an outage is deduplicated within it).
    static let duplicatesWindowMilliseconds: Int64 = 120_000

    public init(name: String = "OFFERTRACK", partitionsTotal: Int = 16, replicas: Int = 3, maxMegabytes: Int? = nil) {
        self.name = name
        self.partitionsTotal = partitionsTotal
        self.replicas = replicas
        self.maxMegabytes = maxMegabytes
    }

    /// What the stream's description says: P, in a form `recordedPartitionsTotal` reads back.
    var description: String { "offertrack fleet stream; partitions-total=\(partitionsTotal)" }

    /// P as recorded in a stream's description; nil when the stream records none (made by hand).
    static func recordedPartitionsTotal(_ description: String) -> Int? {
        let key = "partitions-total="
        for part in description.split(separator: " ") where part.hasPrefix(key) {
            return Int(part.dropFirst(key.count).prefix { $0.isNumber })
        }
        return nil
    }

    func configuration(megabytes: Int) -> StreamConfiguration {
        StreamConfiguration(
            name: name, subjects: ["offertrack.records.>"], replicas: Int64(replicas),
            maxBytes: Int64(megabytes) << 20, duplicatesWindowMilliseconds: Self.duplicatesWindowMilliseconds,
            description: description)
    }

    /// A stream of this name that records another P: refused (SPEC 10, "Misconfiguration never pays twice").
    public struct Mismatch: Error, Sendable, CustomStringConvertible {
        public let stream: String
        public let recorded: Int
        public let requested: Int
        public var description: String {
            "the stream \(stream) was created for --partitions-total \(recorded) and this daemon has "
                + "--partitions-total \(requested): P is fixed for the fleet's life (start it with "
                + "--partitions-total \(recorded), or give this fleet another --stream)"
        }
    }

    /// Checks an existing stream against this one when the cluster answers now; does nothing when it does not
    /// (the forwarder or consumer checks again once it does).
    public func checkAgreement(on client: JetStreamClient) throws(Mismatch) {
        guard client.isConnected, let info = try? client.streamInfo(name) else { return }
        try check(info)
    }

    private func check(_ info: StreamInfo) throws(Mismatch) {
        if let recorded = Self.recordedPartitionsTotal(info.description), recorded != partitionsTotal {
            throw Mismatch(stream: name, recorded: recorded, requested: partitionsTotal)
        }
    }

    /// Makes sure the stream exists and agrees: created when absent, with `maxMegabytes` or else the largest
    /// size the cluster can place (the account's limits, then halving while the servers refuse it for lack of
    /// storage); returns the size in MiB it was created with, or nil when it existed.
    @discardableResult
    public func ensure(on client: JetStreamClient) throws(StreamProblem) -> Int? {
        guard client.isConnected else {
            throw StreamProblem.nats(nil, hint: Self.noServerHint)
        }
        var megabytes = maxMegabytes ?? Self.defaultMegabytes
        if maxMegabytes == nil, let limits = try? client.accountStorageLimits() {
            for limit in [limits.maxStreamBytes, limits.maxStore / Int64(replicas)] where limit > 0 {
                megabytes = max(Self.smallestMegabytes, min(megabytes, Int(limit >> 20)))
            }
        }
        while true {
            do {
                if let info = try client.streamInfo(name) {
                    do { try check(info) } catch { throw StreamProblem.mismatch(error) }
                    return nil
                }
                try client.addStream(configuration(megabytes: megabytes))
                return megabytes
            } catch let error as NATSError {
                if error.jetStreamCode == Self.nameInUse { continue }  // another daemon created it meanwhile
                if maxMegabytes == nil, Self.isInsufficientStorage(error), megabytes > Self.smallestMegabytes {
                    megabytes = max(Self.smallestMegabytes, megabytes / 2)
                    continue
                }
                throw StreamProblem.nats(error, hint: hint(for: error, megabytes: megabytes))
            } catch let problem as StreamProblem {
                throw problem
            } catch {
                throw StreamProblem.nats(nil, hint: "\(error)")
            }
        }
    }

    static let nameInUse: Int32 = 10058
    static let noServerHint =
        "no JetStream server answers: start the cluster, or check the URLs given to --forward/--consume"
    /// Connected, and JetStream answers nothing: seen with a cluster short of a quorum of its nodes, and with
    /// servers whose store's disk filled up (nats-server 2.9 logs nothing then, and its cluster can stay mute
    /// after the space comes back: seen answering none of three nodes 50 and 70 s later, until restarted).
    static let unansweredHint =
        "a server is connected but JetStream does not answer: a quorum of the cluster's nodes must run, with free "
        + "space for their store (-sd); after a full disk, free space and restart the servers"

    /// JetStream's answers for a stream the servers cannot hold: no peers for placement, insufficient
    /// resources, storage exceeded.
    static func isInsufficientStorage(_ error: NATSError) -> Bool {
        [10005, 10023, 10047, 10002, 10053].contains(error.jetStreamCode)
    }

    /// What fixes `error`: the flag or the server setting.
    func hint(for error: NATSError, megabytes: Int) -> String {
        switch error.jetStreamCode {
        case 10005, 10023, 10047, 10002, 10053:
            "the servers cannot place a stream of \(megabytes) MiB with \(replicas) replicas: lower "
                + "--stream-max-mb (or leave it out to size the stream to the cluster) or --stream-replicas, or "
                + "raise max_file_store on the servers"
        case 10074:
            "the server is not clustered: give --stream-replicas 1, or run a JetStream cluster"
        case 10039, 10076:
            "JetStream is not enabled: start nats-server with -js (or a jetstream {} block) and enable it for "
                + "the account"
        default:
            error.isTimeout
                ? Self.unansweredHint : error.jetStreamCode == 0 ? Self.noServerHint : "see the JetStream error"
        }
    }
}

/// Why the stream cannot be used now, with what fixes it.
public enum StreamProblem: Error, Sendable, CustomStringConvertible {
    /// The stream records another P.
    case mismatch(FleetStream.Mismatch)
    /// The cluster refused or did not answer; `hint` says what fixes it.
    case nats(NATSError?, hint: String)

    /// Whether retrying alone cannot help (a refusal from the cluster, not a timeout): shown at once.
    public var isPersistent: Bool {
        switch self {
        case .mismatch: true
        case .nats(let error, _): (error?.jetStreamCode ?? 0) != 0
        }
    }

    public var description: String {
        switch self {
        case .mismatch(let mismatch): "MISCONFIGURED: \(mismatch)"
        case .nats(let error, let hint): (error.map { "\($0); " } ?? "") + "fix: \(hint)"
        }
    }
}
