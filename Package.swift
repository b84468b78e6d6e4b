// swift-tools-version:6.0
import PackageDescription

/// Strict settings applied to every Swift target in one place.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The tests' fault-injection hooks (issue 46) exist only in debug builds: code under `#if OFFERTRACK_FAULT_HOOKS`
/// (SIGKILL or a pause file at a chosen step of an export, a migration or an erasure's rename, the small chunks
/// that make those steps many, `synchronous=OFF`, all read from `OFFERTRACK_TEST_*` and
/// `OFFERTRACKD_TEST_ONLY_SYNCHRONOUS_OFF`). The tests run the debug binaries in .build/debug; the release build
/// that `scripts/package` puts in the .deb compiles none of it (`PackageTests` greps its binaries for the names).
/// A compilation condition rather than a test-only module: the hooks sit inside the journal's and the daemon's
/// steps, which would still need a conditional call each, and a target cannot be linked in one configuration only.
let faultHookSettings: [SwiftSetting] =
    strictSettings + [.define("OFFERTRACK_FAULT_HOOKS", .when(configuration: .debug))]

let package = Package(
    name: "offertrack",
    products: [
        .executable(name: "offertrackd", targets: ["offertrackd"]),
        .executable(name: "offertrack", targets: ["offertrack"]),
    ],
    targets: [
        // C libraries, imported only by their thin Swift wrappers.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        // Thin safe wrappers: the only modules that import C.
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strictSettings),
        .target(name: "Systemd", dependencies: ["CSystemd"], swiftSettings: strictSettings),
        .target(name: "NATS", dependencies: ["CNATS"], swiftSettings: strictSettings),
        .target(name: "CLinux"),
        .target(name: "Posix", dependencies: ["CLinux"], swiftSettings: faultHookSettings),
        // Lock-free counters, gauges and histograms and their Prometheus text exposition.
        .target(name: "Metrics", swiftSettings: strictSettings),
        // Pure Swift: records, tokens, eligibility, attribution, rules, money, report rows, export plans. No I/O.
        .target(name: "OfferTrackDomain", swiftSettings: strictSettings),
        // The formats of what offertrack puts out, for people and files: report and explanation formats, the HTML
        // page, the export's and the payout statement's CSV and manifest and reading them back (SPEC 6, 7, 7.1).
        // No I/O. (Named for output, not "presentation": in the domain a presentation is an offer presented.)
        .target(name: "OutputFormats", dependencies: ["JSON", "OfferTrackDomain"], swiftSettings: strictSettings),
        // JSON itself, for every module that reads or writes it: the strict parser and its values, content identity
        // (SPEC 2), renaming a line's `user` byte for byte (SPEC 11), and the writer of what the CLI prints.
        .target(name: "JSON", dependencies: ["OfferTrackDomain"], swiftSettings: strictSettings),
        // What comes in from outside, in JSON: the line framer, the record validator, the response line (SPEC 2, 3),
        // and the rules file (SPEC 5).
        .target(name: "WireFormat", dependencies: ["JSON", "OfferTrackDomain"], swiftSettings: strictSettings),
        // Deterministic simulated traffic (`offertrack simulate`, the bench, the tests).
        .target(name: "Simulator", dependencies: ["OfferTrackDomain"], swiftSettings: strictSettings),
        // The journal, in four modules, each arrow pointing down (ARCHITECTURE.md, "The journal's rooms").
        // The store (SPEC 2, 3, 11): the records and their SQLite file, its schema and migrations, opening,
        // durability, `meta`, the per-user index and user keys, record reads, backups, checkpoints, and an erasure's
        // renames of stored records.
        .target(
            name: "JournalStore",
            dependencies: ["SQLite", "Posix", "JSON", "OfferTrackDomain"],
            swiftSettings: faultHookSettings),
        // Attribution's join over the store (SPEC 4): the derived tables and roll-ups, the batch join and the bounded
        // refresh, recomputing for new windows, the funnel query; and the writer, whose appends keep the join current.
        .target(
            name: "AttributionJoin",
            dependencies: ["JournalStore", "SQLite", "Posix", "OfferTrackDomain"],
            swiftSettings: strictSettings),
        // What was published, stored in the journal (SPEC 7, 7.1): export days staged and published, their lines and
        // ledger, payout months.
        .target(
            name: "PublishedLedger",
            dependencies: ["AttributionJoin", "JournalStore", "SQLite", "Posix", "OfferTrackDomain"],
            swiftSettings: faultHookSettings),
        // Sealing days (SPEC 12): the days older than the retention counted, their records no rule reads removed, in
        // short transactions over the store and the join (`offertrack seal`).
        .target(
            name: "JournalSealing",
            dependencies: ["AttributionJoin", "JournalStore", "SQLite", "Posix", "OfferTrackDomain"],
            swiftSettings: faultHookSettings),
        // `offertrack verify` (SPEC 6): the file's integrity, the index, the join and the erasures checked.
        .target(
            name: "JournalVerification",
            dependencies: ["PublishedLedger", "AttributionJoin", "JournalStore", "SQLite", "JSON", "OfferTrackDomain"],
            swiftSettings: strictSettings),
        // Publishing files from a journal (SPEC 7, 7.1): an export day's and a payout month's files rendered and stored
        // through the published ledger's stores (`ExportDayStore`, `PayoutMonthStore`).
        .target(
            name: "Publishing",
            dependencies: ["PublishedLedger", "OfferTrackDomain", "OutputFormats", "WireFormat"],
            swiftSettings: strictSettings),
        // The daemon: configuration, event loop, connections, group-commit writer.
        .target(
            name: "OfferTrackDaemon",
            dependencies: [
                "Posix", "Systemd", "JournalStore", "AttributionJoin", "OfferTrackDomain", "WireFormat", "Metrics",
                "Fleet", "NATS",
            ],
            swiftSettings: faultHookSettings
        ),
        // The fleet (SPEC section 10): the stream, an edge's forwarder and what it records in its journal, a central
        // daemon's consumer, the fleet a journal belongs to, several journals read as one, the fleet's export.
        .target(
            name: "Fleet",
            dependencies: [
                "JournalStore", "AttributionJoin", "PublishedLedger", "JournalVerification", "Publishing", "NATS",
                "JSON", "OfferTrackDomain", "OutputFormats", "WireFormat", "Posix",
            ],
            swiftSettings: strictSettings),
        // The CLI commands.
        .target(
            name: "OfferTrackCLI",
            dependencies: [
                "Posix", "JournalStore", "AttributionJoin", "PublishedLedger", "JournalVerification", "JournalSealing",
                "Publishing", "JSON", "OfferTrackDomain", "OutputFormats", "WireFormat",
                "Simulator", "Fleet", "NATS",
            ],
            swiftSettings: faultHookSettings
        ),
        .executableTarget(
            name: "offertrackd", dependencies: ["OfferTrackDaemon", "OfferTrackDomain", "JournalStore", "Posix"],
            swiftSettings: faultHookSettings),
        .executableTarget(
            name: "offertrack", dependencies: ["OfferTrackCLI", "Posix"], swiftSettings: faultHookSettings),
        // The release benchmark (`scripts/bench`): baselines, end-to-end ingest, latency, footprint.
        .executableTarget(
            name: "offertrack-bench",
            dependencies: [
                "JournalStore", "AttributionJoin", "SQLite", "JSON", "OfferTrackDomain", "WireFormat", "Simulator",
                "Posix", "TestSupport",
            ],
            path: "bench/Sources/offertrack-bench",
            swiftSettings: strictSettings
        ),
        // What only the tests and the bench use: scratch directories, a daemon process with a stand-in for systemd's
        // notification socket, signals, a seeded generator, published export days synthesised into a journal.
        .target(
            name: "TestSupport",
            dependencies: [
                "Posix", "Simulator", "JournalStore", "AttributionJoin", "SQLite", "OfferTrackDomain", "OutputFormats",
            ],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "DomainTests",
            dependencies: ["JSON", "OfferTrackDomain", "OutputFormats", "WireFormat", "Simulator"],
            swiftSettings: strictSettings),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "OfferTrackDomain"], swiftSettings: strictSettings),
        .testTarget(
            name: "WireFormatTests", dependencies: ["WireFormat", "JSON", "OfferTrackDomain"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SimulatorTests", dependencies: ["Simulator", "WireFormat", "OfferTrackDomain"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "OfferTrackDaemon", "JournalStore", "AttributionJoin", "WireFormat", "OfferTrackDomain", "Posix",
                "TestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "OfferTrackCLI", "JournalStore", "AttributionJoin", "PublishedLedger", "OfferTrackDomain",
                "OutputFormats", "Posix",
            ],
            swiftSettings: faultHookSettings),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"], swiftSettings: strictSettings),
        // The arrows (ARCHITECTURE.md): imports against Package.swift and the document, environment reads. No
        // dependencies: it reads the sources as text.
        .testTarget(name: "StructureTests", swiftSettings: strictSettings),
        .testTarget(
            name: "JournalTests",
            dependencies: [
                "JournalStore", "AttributionJoin", "PublishedLedger", "JournalVerification", "JournalSealing",
                "Publishing", "SQLite", "OfferTrackDomain", "OutputFormats", "WireFormat", "Simulator", "TestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "Posix", "SQLite", "JSON", "OfferTrackDomain", "OutputFormats", "WireFormat", "Simulator",
                "NATS", "Fleet", "JournalStore", "AttributionJoin", "JournalVerification", "TestSupport",
            ],
            // A schema-7 journal and what the schema-7 offertrack answered from it (SchemaMigrationTests).
            exclude: ["Fixtures"],
            swiftSettings: strictSettings),
    ]
)
