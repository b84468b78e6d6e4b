import Foundation
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// The Debian package `scripts/package` builds, checked with Debian's own tools and installed as an operator
/// would: in a mount namespace whose /usr, /etc and /var are throw-away overlays, where no systemd runs and the
/// Swift toolchain is hidden (Tests/Tools/package-namespace). `scripts/test` builds the package once before the
/// suite and names it in OFFERTRACK_PACKAGE; without it the tests use .build/package/, where `scripts/package`
/// puts it.
@Suite(.serialized) struct PackageTests {
    static var packagePath: String {
        ProcessInfo.processInfo.environment["OFFERTRACK_PACKAGE"]
            ?? Repository.file(".build/package/offertrack_\(OfferTrackVersion.string)_amd64.deb")
    }

    /// The package, or nil (with a failed expectation) when it was not built.
    static func package(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let exists = FileManager.default.fileExists(atPath: packagePath)
        #expect(exists, "no \(packagePath): run scripts/package first", sourceLocation: sourceLocation)
        return exists ? packagePath : nil
    }

    static func field(_ package: String, _ name: String) throws -> String {
        try Shell.run("/usr/bin/dpkg-deb", ["--field", package, name]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The package's files, as `dpkg-deb --contents` lists them (paths without the leading `.`).
    static func contents(_ package: String) throws -> [String] {
        try Shell.run("/usr/bin/dpkg-deb", ["--contents", package]).output.split(separator: "\n").compactMap {
            $0.split(separator: " ", omittingEmptySubsequences: true).last.map { String($0.dropFirst()) }
        }
    }

    @Test func lintianFindsNoErrorAndEveryWarningIsExplained() throws {
        guard let package = Self.package() else { return }
        let lintian = try Shell.run(
            "/usr/bin/lintian", ["--fail-on", "error", "--no-tag-display-limit", package],
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"])
        #expect(lintian.status == 0, "\(lintian.output)")
        let lines = lintian.output.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("E: ") }, "\(lintian.output)")
        // "W: offertrack: TAG details": each warning's tag is explained in docs/development/testing.md.
        let manual = try String(contentsOfFile: Repository.file("docs/development/testing.md"), encoding: .utf8)
        for line in lines where line.hasPrefix("W: ") {
            let tag = line.split(separator: " ").dropFirst(2).first.map(String.init) ?? "?"
            #expect(
                manual.contains("`\(tag)`"), "lintian warning not explained in docs/development/testing.md: \(line)")
        }
    }

    /// The name, version and Depends: the version is the one --version prints; Depends covers exactly the
    /// shared libraries the binaries name (DT_NEEDED), each by the package that ships it, and no Swift library.
    @Test func theVersionAndTheDependenciesComeFromTheBinaries() throws {
        guard let package = Self.package() else { return }
        #expect(try Self.field(package, "Package") == "offertrack")
        #expect(try Self.field(package, "Version") == OfferTrackVersion.string)
        #expect(try Self.field(package, "Architecture") == "amd64")
        let depends = try Self.field(package, "Depends").split(separator: ",").map {
            String($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
        }
        let directory = ScratchDirectory()
        #expect(try Shell.run("/usr/bin/dpkg-deb", ["--extract", package, directory.path]).status == 0)
        var needed: Set<String> = []
        for binary in ["offertrackd", "offertrack"] {
            let dynamic = try Shell.run("/usr/bin/readelf", ["--dynamic", directory.file("usr/bin/\(binary)")])
            for line in dynamic.output.split(separator: "\n") where line.contains("(NEEDED)") {
                if let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") {
                    needed.insert(String(line[line.index(after: open)..<close]))
                }
            }
        }
        #expect(!needed.contains { $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") }, "\(needed)")
        for library in ["libsqlite3.so.0", "libsystemd.so.0"] { #expect(needed.contains(library), "\(needed)") }
        #expect(needed.contains { $0.hasPrefix("libnats.so") }, "\(needed)")
        var owners: Set<String> = []
        for library in needed {
            let search = try Shell.run("/usr/bin/dpkg-query", ["--search", "*/\(library)"])
            let owner = search.output.split(separator: ":").first.map(String.init) ?? ""
            #expect(search.status == 0 && depends.contains(owner), "\(library): \(search.output) not in \(depends)")
            owners.insert(owner)
        }
        // Besides the libraries: only the tools the postinst runs (systemd-sysusers, systemd-tmpfiles).
        #expect(Set(depends).subtracting(owners) == ["systemd"], "\(depends)")
    }

    /// Every unit in systemd/ and every helper script in scripts/ is packaged, at the paths the units name.
    @Test func everyUnitAndHelperScriptIsPackaged() throws {
        guard let package = Self.package() else { return }
        let files = Set(try Self.contents(package))
        let units = try FileManager.default.contentsOfDirectory(atPath: Repository.file("systemd")).filter {
            $0.hasSuffix(".service") || $0.hasSuffix(".socket") || $0.hasSuffix(".timer")
        }
        #expect(units.count >= Set(UnitFile.names).count)
        for unit in units { #expect(files.contains("/usr/lib/systemd/system/\(unit)"), "\(unit)") }
        let scripts = try FileManager.default.contentsOfDirectory(atPath: Repository.file("scripts")).filter {
            $0.hasPrefix("offertrack-")
        }
        for script in scripts { #expect(files.contains("/usr/lib/offertrack/\(script)"), "\(script)") }
        for path in [
            "/usr/bin/offertrackd", "/usr/bin/offertrack", "/usr/lib/sysusers.d/offertrack.conf",
            "/usr/lib/tmpfiles.d/offertrack.conf", "/etc/offertrack/rules.json", "/usr/share/doc/offertrack/README.md",
        ] {
            #expect(files.contains(path), "\(path)")
        }
        // The hand-written manual pages, compressed as dh_installman does, byte for byte from man/; the manual's pages.
        for (page, section) in [("offertrackd", 8), ("offertrack", 1), ("offertrack-rules", 5)] {
            let installed = "/usr/share/man/man\(section)/\(page).\(section).gz"
            #expect(files.contains(installed), "\(installed)")
        }
        let directory = ScratchDirectory()
        #expect(try Shell.run("/usr/bin/dpkg-deb", ["--extract", package, directory.path]).status == 0)
        for (page, section) in [("offertrackd", 8), ("offertrack", 1), ("offertrack-rules", 5)] {
            let unpacked = try Shell.run(
                "/bin/sh",
                ["-c", #"gzip -dc "$0""#, directory.file("usr/share/man/man\(section)/\(page).\(section).gz")])
            let source = try String(contentsOfFile: Repository.file("man/\(page).\(section)"), encoding: .utf8)
            #expect(unpacked.status == 0 && unpacked.output == source, "\(page)(\(section)) differs from man/")
        }
        let pages = try FileManager.default.contentsOfDirectory(atPath: Repository.file("docs")).filter {
            $0.hasSuffix(".md")
        }
        #expect(pages.count >= 7)
        for page in pages { #expect(files.contains("/usr/share/doc/offertrack/docs/\(page)"), "\(page)") }
        let conffiles = try Self.controlFile(package, "conffiles")
        #expect(conffiles == "/etc/offertrack/rules.json\n")
    }

    static func controlFile(_ package: String, _ name: String) throws -> String {
        try Shell.run("/usr/bin/dpkg-deb", ["--info", package, name]).output
    }
}

/// A mount namespace from Tests/Tools/package-namespace, held open by a `sleep` and entered with nsenter.
final class PackageNamespace {
    let directory: ScratchDirectory
    private let holder: SpawnedProcess

    init(_ directory: ScratchDirectory) throws {
        self.directory = directory
        holder = try SpawnedProcess(
            [
                "/usr/bin/unshare", "--mount", "--propagation", "private",
                Repository.file("Tests/Tools/package-namespace"), directory.path, "--", "/bin/sleep", "900",
            ], environment: ["PATH": "/usr/bin:/bin"], stderrPath: directory.file("namespace.log"))
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: directory.file("ready")) && Date() < deadline {
            usleep(10_000)
        }
        guard FileManager.default.fileExists(atPath: directory.file("ready")) else {
            throw ToolFailure("the package namespace did not come up")
        }
    }

    deinit {
        kill(holder.pid, SIGKILL)
        _ = holder.wait()
    }

    /// Runs `script` with /bin/sh inside the namespace, with a clean environment (what dpkg gets from a root
    /// shell: no toolchain paths).
    @discardableResult
    func run(_ script: String) throws -> Shell.Outcome {
        try Shell.run(
            "/usr/bin/nsenter",
            ["--target", "\(holder.pid)", "--mount", "--", "/usr/bin/env", "-i"]
                + ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=/root", "/bin/sh", "-c", script])
    }
}

extension PackageTests {
    /// A newer version of `package` (Version `VERSION+SUFFIX`), with `rules` as its default rules file when given:
    /// the package unpacked, changed and rebuilt with dpkg-deb (md5sums kept true).
    static func repackaged(
        _ package: String, suffix: String, rules: String? = nil, in directory: ScratchDirectory
    ) throws -> String {
        let tree = directory.file("tree-\(suffix)")
        #expect(try Shell.run("/usr/bin/dpkg-deb", ["--raw-extract", package, tree]).status == 0)
        let control = "\(tree)/DEBIAN/control"
        let version = "\(OfferTrackVersion.string)+\(suffix)"
        try String(contentsOfFile: control, encoding: .utf8)
            .replacingOccurrences(of: "Version: \(OfferTrackVersion.string)\n", with: "Version: \(version)\n")
            .write(toFile: control, atomically: true, encoding: .utf8)
        if let rules {
            try rules.write(toFile: "\(tree)/etc/offertrack/rules.json", atomically: true, encoding: .utf8)
            let sums = try Shell.run(
                "/bin/sh",
                [
                    "-c",
                    "cd \(tree) && find . -path ./DEBIAN -prune -o -type f -printf '%P\\0' | sort -z | xargs -0 md5sum",
                ])
            try sums.output.write(toFile: "\(tree)/DEBIAN/md5sums", atomically: true, encoding: .utf8)
        }
        let output = directory.file("offertrack_\(version)_amd64.deb")
        let build = try Shell.run("/usr/bin/dpkg-deb", ["--root-owner-group", "--build", tree, output])
        #expect(build.status == 0, "\(build.output)")
        return output
    }

    /// Installs, runs, upgrades twice, removes and purges, checking at each step what an operator relies on.
    @Test func installUpgradeRemoveAndPurgeOnAMachineWithoutSwift() throws {
        guard let package = Self.package() else { return }
        let directory = ScratchDirectory("ot-pkg")
        let unchanged = try Self.repackaged(package, suffix: "test1", in: directory)
        let defaults = try String(
            contentsOfFile: Repository.file("systemd/rules.example.json"), encoding: .utf8)
        let newDefaults = defaults.replacingOccurrences(of: "\"amountMinor\": 500", with: "\"amountMinor\": 550")
        #expect(newDefaults != defaults)
        let changed = try Self.repackaged(package, suffix: "test2", rules: newDefaults, in: directory)
        let namespace = try PackageNamespace(directory)

        // No toolchain, no offertrack yet.
        #expect(try namespace.run("command -v swift || test -e /opt/swift/usr/bin/swift").status != 0)
        #expect(try namespace.run("dpkg-query --status offertrack").status != 0)

        // dpkg -i with nothing but the declared dependencies (dpkg refuses unmet ones).
        let start = Date()
        let install = try namespace.run("dpkg --install \(package)")
        let installSeconds = Date().timeIntervalSince(start)
        #expect(install.status == 0, "\(install.output)")
        print("PackageTests: dpkg --install took \(String(format: "%.2f", installSeconds)) s")
        // man-db's trigger re-indexes every manual page after each dpkg run (most of the time above on a busy
        // machine); the steps below do not need it.
        try namespace.run("rm -f /var/lib/man-db/auto-update")

        let version = try namespace.run("offertrackd --version && offertrack --version")
        #expect(version.status == 0, "\(version.output)")
        #expect(version.output.split(separator: "\n").allSatisfy { $0.contains(OfferTrackVersion.string) })
        #expect(version.output.split(separator: "\n").count == 2, "\(version.output)")
        let help = try namespace.run("offertrack --help")
        #expect(help.status == 0 && help.output.contains("offertrack"), "\(help.output)")

        // systemd reads the installed units, and their executables exist.
        let verify = try namespace.run(
            "systemd-analyze verify /usr/lib/systemd/system/offertrack*.service /usr/lib/systemd/system/offertrack*.socket /usr/lib/systemd/system/offertrack*.timer"
        )
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")

        try Self.expectUsersDirectoriesAndEnabledUnits(namespace)

        // A journal, an export and a backup made by the installed programs, as the offertrack user.
        let records = directory.file("records.jsonl")
        try (TestRecords.stream(prefix: "pkg", count: 25).joined(separator: "\n") + "\n").write(
            toFile: records, atomically: true, encoding: .utf8)
        let work = try namespace.run(
            """
            set -e
            install -d -o offertrack /run/offertrack-test
            setpriv --reuid offertrack --regid offertrack --init-groups \
                env STATE_DIRECTORY=/var/lib/offertrack offertrackd --rules /etc/offertrack/rules.json \
                --socket /run/offertrack-test/offertrack.sock &
            daemon=$!
            for i in $(seq 200); do [ -S /run/offertrack-test/offertrack.sock ] && break; sleep 0.05; done
            offertrack ingest --socket /run/offertrack-test/offertrack.sock \(records)
            kill -TERM $daemon
            wait $daemon
            runuser -u offertrack -- env STATE_DIRECTORY=/var/lib/offertrack \
                OFFERTRACK_TEXTFILE_DIR=/var/lib/offertrack-metrics /usr/lib/offertrack/offertrack-export-catchup \
                --rules /etc/offertrack/rules.json
            runuser -u offertrack -- env STATE_DIRECTORY=/var/lib/offertrack \
                OFFERTRACK_TEXTFILE_DIR=/var/lib/offertrack-metrics /usr/lib/offertrack/offertrack-backup-nightly \
                --rules /etc/offertrack/rules.json
            ls /var/lib/offertrack-exports /var/backups/offertrack /var/lib/offertrack-metrics
            # With no role file a host runs every nightly job; an edge seals and backs up, and skips the export.
            runuser -u offertrack -- /usr/lib/offertrack/offertrack-role
            echo edge >/etc/offertrack/role
            runuser -u offertrack -- /usr/lib/offertrack/offertrack-role backup
            if runuser -u offertrack -- /usr/lib/offertrack/offertrack-role export; then exit 1; fi
            rm /etc/offertrack/role
            """)
        #expect(work.status == 0, "\(work.output)")
        #expect(work.output.contains("a single host: export payouts seal backup\n"), "\(work.output)")
        #expect(work.output.contains("offertrack-export.prom") && work.output.contains("offertrack-backup.prom"))
        #expect(work.output.contains(".manifest.json"), "\(work.output)")

        // An edited rules file survives an upgrade whose default did not change, silently...
        #expect(
            try namespace.run("sed -i 's/\"amountMinor\": 700/\"amountMinor\": 725/' /etc/offertrack/rules.json").status
                == 0)
        let edited = try namespace.run("cat /etc/offertrack/rules.json").output
        #expect(edited.contains("\"amountMinor\": 725"))
        let upgrade = try namespace.run("dpkg --install \(unchanged) </dev/null")
        #expect(upgrade.status == 0, "\(upgrade.output)")
        #expect(try namespace.run("cat /etc/offertrack/rules.json").output == edited)
        #expect(try namespace.run("test -e /etc/offertrack/rules.json.dpkg-dist").status != 0)
        // ...and one whose default changed: kept, the new default beside it as .dpkg-dist.
        let upgradeChanged = try namespace.run("dpkg --install --force-confold \(changed) </dev/null")
        #expect(upgradeChanged.status == 0, "\(upgradeChanged.output)")
        #expect(try namespace.run("cat /etc/offertrack/rules.json").output == edited)
        #expect(try namespace.run("cat /etc/offertrack/rules.json.dpkg-dist").output == newDefaults)
        #expect(try namespace.run("dpkg-query --showformat '${Version}' --show offertrack").output.hasSuffix("+test2"))

        // Remove keeps the configuration and the data; purge keeps the data (money) and the users that own it.
        let remove = try namespace.run("dpkg --remove offertrack")
        #expect(remove.status == 0, "\(remove.output)")
        #expect(try namespace.run("test ! -e /usr/bin/offertrackd && test -e /etc/offertrack/rules.json").status == 0)
        let purge = try namespace.run("dpkg --purge offertrack")
        #expect(purge.status == 0, "\(purge.output)")
        let left = try namespace.run(
            """
            ls /var/lib/offertrack /var/lib/offertrack-exports /var/backups/offertrack
            test ! -e /etc/offertrack/rules.json && test ! -e /etc/offertrack/rules.json.dpkg-dist && echo rules-gone
            test ! -e /var/lib/offertrack-metrics && echo metrics-gone
            test ! -e /etc/systemd/system/sockets.target.wants/offertrackd.socket && echo unit-links-gone
            getent passwd offertrack >/dev/null && echo user-kept
            mkdir \(directory.file("after-purge")) && cp -a /var/lib/offertrack/. \(directory.file("after-purge"))
            """)
        #expect(left.status == 0, "\(left.output)")
        for word in ["offertrack.db", ".manifest.json", "Z.db", "rules-gone", "metrics-gone", "unit-links-gone"] {
            #expect(left.output.contains(word), "\(word): \(left.output)")
        }
        #expect(left.output.contains("user-kept"))
        // The journal left behind is whole: it verifies and holds the 25 records.
        let journal = directory.file("after-purge/offertrack.db")
        let verifyJournal = try Shell.run(Binaries.cli, ["verify", "--db", journal])
        #expect(verifyJournal.status == 0, "\(verifyJournal.output)")
        #expect(try JournalInspector(path: journal).count() == 25)
    }

    /// The users, groups and directories of sysusers.d and tmpfiles.d exist as declared, and the socket and the
    /// timers are enabled (deb-systemd-helper's symlinks: systemd is not running here).
    static func expectUsersDirectoriesAndEnabledUnits(_ namespace: PackageNamespace) throws {
        let passwd = try namespace.run("getent passwd offertrack").output
        #expect(passwd.contains(":/var/lib/offertrack:/usr/sbin/nologin"), "\(passwd)")
        for group in ["offertrack", "offertrack-writers", "offertrack-finance", "offertrack-reviewers"] {
            #expect(try namespace.run("getent group \(group)").status == 0, "\(group)")
        }
        let tmpfiles = try String(
            contentsOfFile: Repository.file("systemd/tmpfiles.d/offertrack.conf"), encoding: .utf8)
        for line in tmpfiles.split(separator: "\n") where line.hasPrefix("d ") {
            let fields = line.split(separator: " ").map(String.init)
            let mode = String(Int(fields[2], radix: 8) ?? 0, radix: 8)
            let stat = try namespace.run("stat -c '%a %U %G' \(fields[1])")
            #expect(stat.output == "\(mode) \(fields[3]) \(fields[4])\n", "\(fields[1]): \(stat.output)")
        }
        let timers = try FileManager.default.contentsOfDirectory(atPath: Repository.file("systemd")).filter {
            $0.hasSuffix(".timer")
        }
        #expect(!timers.isEmpty)
        let links = ["sockets.target.wants/offertrackd.socket"] + timers.map { "timers.target.wants/\($0)" }
        for link in links {
            let target = try namespace.run("readlink -f /etc/systemd/system/\(link)").output
            let unit = link.split(separator: "/").last.map(String.init) ?? "?"
            #expect(target == "/usr/lib/systemd/system/\(unit)\n", "\(link): \(target)")
        }
    }

    /// Maintainer scripts must not fail where systemd looks present (/run/systemd/system) but does not answer, or
    /// where systemctl is missing altogether (a container, an image build): install, reinstall, remove and purge
    /// all succeed. (The main test covers the plain case: no systemd running, systemctl offline.)
    @Test(arguments: ["systemd-not-answering", "no-systemctl"])
    func theMaintainerScriptsToleratesAnAbsentSystemd(setting: String) throws {
        guard let package = Self.package() else { return }
        let directory = ScratchDirectory("ot-pkg")
        let namespace = try PackageNamespace(directory)
        let prepare =
            setting == "no-systemctl"
            ? "mkdir -p /run/systemd/system && rm -f /usr/bin/systemctl /bin/systemctl && ! command -v systemctl"
            : "mkdir -p /run/systemd/system"
        #expect(try namespace.run(prepare + " && rm -f /var/lib/man-db/auto-update").status == 0)
        for step in [
            "dpkg --install \(package)", "dpkg --install \(package)", "dpkg --remove offertrack",
            "dpkg --purge offertrack",
        ] {
            let outcome = try namespace.run(step)
            #expect(outcome.status == 0, "\(setting): \(step): \(outcome.output)")
        }
    }
}
