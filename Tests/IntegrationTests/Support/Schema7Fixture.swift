import Foundation
import TestSupport

/// The journal the schema-7 offertrackd made (`Fixtures/schema7/journal.db`: simulated returning and new users,
/// reviews, three published days), its rules file, and what the schema-7 CLI wrote from it (`outputs/`).
enum Schema7Fixture {
    /// The fixture's folder.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/schema7").path
    /// The rules file the fixture's outputs were written with.
    static var rules: String { "\(directory)/rules.json" }

    /// A copy of the fixture journal in `directory`, as `offertrack.db`.
    static func copy(in directory: ScratchDirectory) throws -> String {
        let path = directory.file("offertrack.db")
        try FileManager.default.copyItem(atPath: "\(Self.directory)/journal.db", toPath: path)
        return path
    }
}
