import JournalStore
import SQLite

/// What a reader asks of the published export days and payout months (SPEC 7, 7.1).
extension ReadOnlyJournal {
    /// Whether export day `day` (`YYYY-MM-DD`) is published.
    public func isPublished(_ day: String) throws -> Bool {
        try hasRow("published_days", where: "day", is: day)
    }

    /// Whether `table` (which may not exist yet in an old journal) has a row whose `column` is `value`.
    private func hasRow(_ table: String, where column: String, is value: String) throws -> Bool {
        guard try hasTable(table) else { return false }
        let statement = try connection.prepare("SELECT 1 FROM \(table) WHERE \(column) = ?1")
        try statement.bind(value, at: 1)
        defer { statement.reset() }
        return try statement.step()
    }

    /// The latest published export day (`YYYY-MM-DD`), or nil.
    public func lastPublishedDay() throws -> String? {
        guard try hasTable("published_days") else { return nil }
        return try connection.scalarText("SELECT max(day) FROM published_days")
    }

    /// Every published export day (`YYYY-MM-DD`), in order.
    public func publishedDays() throws -> [String] {
        try connection.allTexts("SELECT day FROM published_days ORDER BY day")
    }
}

extension ReadOnlyJournal {
    /// The first published export day (`YYYY-MM-DD`), or nil: payout months start with its month (SPEC 7.1).
    public func firstPublishedDay() throws -> String? {
        guard try hasTable("published_days") else { return nil }
        return try connection.scalarText("SELECT min(day) FROM published_days")
    }

    /// The latest published payout month (`YYYY-MM`), or nil.
    public func lastPublishedMonth() throws -> String? {
        guard try hasTable("published_months") else { return nil }
        return try connection.scalarText("SELECT max(month) FROM published_months")
    }

    /// Whether payout month `month` (`YYYY-MM`) is published.
    public func isPublishedMonth(_ month: String) throws -> Bool {
        try hasRow("published_months", where: "month", is: month)
    }

    /// The latest published payout month before `month` (`YYYY-MM`) and its manifest as first published, or nil.
    public func latestPublishedMonth(before month: String) throws -> (month: String, manifest: [UInt8])? {
        guard try hasTable("published_months") else { return nil }
        let statement = try connection.prepare(
            "SELECT month, manifest FROM published_months WHERE month < ?1 ORDER BY month DESC LIMIT 1")
        try statement.bind(month, at: 1)
        defer { statement.reset() }
        guard try statement.step(), let found = statement.text(0) else { return nil }
        return (found, statement.bytes(1))
    }
}
