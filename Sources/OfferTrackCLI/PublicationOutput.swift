import Posix

/// Where `export` and `payouts` write a published period's two files: the journals checked to exist and the
/// output directory checked (owned by this user or root) before anything is published, then both files written
/// atomically.
struct PublicationOutput {
    let path: String
    private let directory: OutputDirectory

    init(options: CommonOptions, path: String) throws(CLIError) {
        for journal in options.databasePaths where CurrentProcess.fileSize(journal) == nil {
            throw CLIError(.noInput, "no journal at \(journal)")
        }
        do {
            directory = try OutputDirectory.ownedByUserOrRoot(path)
        } catch {
            throw CLIError(.cannotCreate, "--out: \(error)")
        }
        self.path = path
    }

    /// Writes `NAME.csv` and `NAME.manifest.json` and says which it did; `period` names what was published
    /// ("day", "month") in the message of a failed write.
    func write(csv: [UInt8], manifest: [UInt8], name: String, republished: Bool, period: String) throws(CLIError) {
        let base = "\(path)/\(name)"
        do {
            try directory.writeAtomically(csv, named: "\(name).csv")
            try directory.writeAtomically(manifest, named: "\(name).manifest.json")
        } catch {
            throw CLIError(.cannotCreate, "writing \(base): \(error) (the \(period) is published; run it again)")
        }
        try Output.write("\(republished ? "rewrote" : "published") \(base).csv and \(base).manifest.json\n")
    }
}
