/// The three levels of the per-user index, each a table of `UserIndexColumns`: `by_user_recent` lists a few
/// batches' records (schema 10), `by_user` every other record with a `records` row, and `by_user_sealed` the
/// records of sealed days that sealing kept (schema 21, SPEC 12), which have none. Sealed entries never leave their
/// level but when no rule reads them any more, so its pages stay full, where deletions among the other levels'
/// entries would leave them partly empty.
package enum UserIndexLevel: Int64, CaseIterable, Sendable {
    case main = 0
    case recent = 1
    case sealed = 2

    /// The level's table.
    package var table: String {
        switch self {
        case .main: "by_user"
        case .recent: "by_user_recent"
        case .sealed: "by_user_sealed"
        }
    }

    /// Schema 21: the sealed level, and the entries sealing kept before it moved there (those of sealed days without
    /// a `records` row), their bodies as they were; the next seal of a day of their user rewrites them sealed.
    static let migration = """
        \(UserIndexColumns.createTable("by_user_sealed"))
        INSERT INTO by_user_sealed (\(UserIndexColumns.all))
            SELECT \(UserIndexColumns.all) FROM by_user b WHERE \(keptWithoutRow)
            UNION ALL SELECT \(UserIndexColumns.all) FROM by_user_recent b WHERE \(keptWithoutRow);
        DELETE FROM by_user AS b WHERE \(keptWithoutRow);
        DELETE FROM by_user_recent AS b WHERE \(keptWithoutRow);
        """

    /// An entry (aliased `b`) of a sealed day without a `records` row, in SQL: one sealing kept.
    private static let keptWithoutRow = """
        b.kind < 6 AND b.ts < (SELECT (CAST(value AS INTEGER) + 1) * 86400000 FROM meta WHERE key = 'sealed_through_day')
            AND NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = b.seq)
        """
}
