import OfferTrackDomain
import SQLite

/// A journal's published export days narrowed to some of its conversions (`offertrack split`, SPEC 10): each side of
/// a split keeps the stored lines and the rows in force of its own conversions, so that the fleet's export, which
/// merges every central journal's lines (`FleetExport`), rewrites each published day as the same bytes, and a later
/// adjustment of a conversion is computed where its records are. Payout months are kept whole: each central journal
/// stores the fleet's statements.
package enum PublishedSplit {
    /// Why a journal's published days cannot be divided.
    package struct Undividable: Error, CustomStringConvertible {
        package let description: String
    }

    /// Refuses a journal with a day whose lines are not stored (published before schema 14): it cannot be divided.
    package static func checkDividable(on connection: Connection) throws {
        let old = try connection.allTexts(
            """
            SELECT p.day FROM published_days p LEFT JOIN export_runs r ON r.run = p.run
            WHERE p.run IS NULL OR r.lines IS NULL ORDER BY p.day LIMIT 3
            """)
        guard old.isEmpty else {
            throw Undividable(
                description: "published days \(old.joined(separator: ", ")) store their CSV only (published by a "
                    + "release before schema 14), so their rows cannot be divided between journals")
        }
    }

    /// Keeps, in the caller's transaction, only the published lines and rows in force of conversions `keeps` is true
    /// of, each published day's files rewritten from its kept lines by `render`; runs never published are deleted
    /// (the split is made with the export stopped). Returns how many lines were taken out. The caller has checked
    /// the days are dividable (`checkDividable`).
    package static func keep(
        conversions keeps: (String) -> Bool, render: JournalNarrowing.Render, on connection: Connection
    ) throws -> Int {
        let published = "SELECT run FROM published_days WHERE run IS NOT NULL"
        for table in ["export_parts", "export_lines", "ledger_entries", "export_runs"] {
            try connection.execute("DELETE FROM \(table) WHERE run NOT IN (\(published))")
        }
        var removed = 0
        let days = try connection.prepare("SELECT day, run, manifest FROM published_days ORDER BY day")
        var rows: [(day: String, run: Int64, manifest: [UInt8])] = []
        while try days.step() { rows.append((days.text(0) ?? "", days.int64(1), days.bytes(2))) }
        days.reset()
        for (day, run, manifest) in rows {
            guard let lines = try ExportLines.read(run: run, on: connection) else { continue }
            let kept = lines.filter { keeps($0.row.conversionId) }
            guard kept.count != lines.count else { continue }
            removed += lines.count - kept.count
            let files = try render(day, kept, manifest)
            try connection.execute(
                "DELETE FROM export_lines WHERE run = \(run); DELETE FROM export_parts WHERE run = \(run)")
            try ExportLines.insert(kept[...], first: 0, run: run, on: connection)
            let count = try connection.prepare("UPDATE export_runs SET lines = ?2 WHERE run = ?1")
            try count.bind(run, at: 1)
            try count.bind(Int64(kept.count), at: 2)
            try count.run()
            let part = try connection.prepare("INSERT INTO export_parts (run, part, bytes) VALUES (?1, ?2, ?3)")
            var start = 0
            var number: Int64 = 0
            repeat {
                let end = min(files.csv.count, start + ExportLimits().partBytes)
                try part.bind(run, at: 1)
                try part.bind(number, at: 2)
                try part.bindText(Array(files.csv[start..<end]), at: 3)
                try part.run()
                start = end
                number += 1
            } while start < files.csv.count
            let update = try connection.prepare("UPDATE published_days SET manifest = ?2 WHERE day = ?1")
            try update.bind(day, at: 1)
            try update.bindText(files.manifest, at: 2)
            try update.run()
        }
        for table in ["ledger_entries", "export_ledger"] {
            let leaving = try connection.allTexts("SELECT DISTINCT conversion_id FROM \(table)").filter { !keeps($0) }
            let delete = try connection.prepare("DELETE FROM \(table) WHERE conversion_id = ?1")
            for id in leaving {
                try delete.bind(id, at: 1)
                try delete.run()
            }
        }
        return removed
    }
}
