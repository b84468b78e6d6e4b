import AttributionJoin
import JournalStore
import OfferTrackDomain
import SQLite

/// One side of a split journal (`offertrack split`, SPEC 10): the journal narrowed, in one transaction, to some of
/// its users (`UserRemoval`) and to the published export lines and rows in force of some conversions
/// (`PublishedSplit`), its meta updated by the caller in the same transaction.
public enum JournalNarrowing {
    /// Which published conversions a narrowed journal keeps.
    public enum Conversions: Sendable {
        /// Those its remaining users' derived tables hold.
        case derived
        /// All but these (those the other side derived).
        case allBut(Set<ExactString>)
    }

    /// What narrowing did.
    public struct Result: Sendable {
        public let keptUsers: Int
        public let removedUsers: Int
        /// The conversions the narrowed journal derives.
        public let derivedConversions: Set<ExactString>
        /// Published export lines taken out.
        public let removedLines: Int
    }

    /// Why a journal cannot be divided (nothing was changed).
    public struct Undividable: Error, CustomStringConvertible {
        public let description: String
    }

    /// A published day's CSV and manifest for the lines one side keeps, given the manifest it was published with.
    public typealias Render = (_ day: String, _ lines: [ExportPlan.Line], _ manifest: [UInt8]) throws -> (
        csv: [UInt8], manifest: [UInt8]
    )

    /// Refuses a journal whose published days or forgotten people cannot be divided: days published before schema
    /// 14 (their lines are not stored), or forgotten people whose partition was not noted (`UserPartitions`).
    /// Returns the partitions noted for users whose name does not give theirs.
    public static func check(_ writer: JournalWriter) throws -> [String: Int] {
        let connection = try writer.currentConnection()
        do { try PublishedSplit.checkDividable(on: connection) } catch let refusal as PublishedSplit.Undividable {
            throw Undividable(description: refusal.description)
        }
        let noted = try UserPartitions.all(on: connection)
        let missing = try UserPartitions.erasedNames(on: connection).filter { noted[$0] == nil }
        guard missing.isEmpty else {
            throw Undividable(
                description: "\(missing.count) forgotten \(missing.count == 1 ? "person's" : "people's") partition "
                    + "is not recorded (\(missing.prefix(3).joined(separator: ", "))): they were forgotten by a "
                    + "release before schema 18, and their records cannot be placed")
        }
        return noted
    }

    /// Narrows the journal `writer` writes to the users `keepingUsers` is true of and to `conversions`' published
    /// lines, each published day's files rewritten by `render`; `meta` updates the journal's meta in the same
    /// transaction. With `dropSealedCounts`, the sealed days' presentation counts go too (one side keeps them). The
    /// journal has passed `check`.
    public static func narrow(
        _ writer: JournalWriter, keepingUsers: (String) -> Bool, conversions: Conversions, dropSealedCounts: Bool,
        render: Render, meta: (JournalMeta) throws -> Void
    ) throws -> Result {
        let connection = try writer.currentConnection()
        return try connection.transaction {
            let counts = try UserRemoval.remove(
                where: { !keepingUsers($0) }, dropSealedCounts: dropSealedCounts, on: connection)
            let derived = try UserRemoval.conversionIDs(on: connection)
            let keeps: (String) -> Bool =
                switch conversions {
                case .derived: { derived.contains(ExactString($0)) }
                case .allBut(let others): { !others.contains(ExactString($0)) }
                }
            let removed = try PublishedSplit.keep(conversions: keeps, render: render, on: connection)
            try meta(JournalMeta(connection))
            return Result(
                keptUsers: counts.kept, removedUsers: counts.removed, derivedConversions: derived, removedLines: removed
            )
        }
    }
}
