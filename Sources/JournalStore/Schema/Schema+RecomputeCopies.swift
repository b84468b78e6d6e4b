import SQLite

/// The copies of the derived tables a recompute for new windows fills beside the live ones (`DerivedTableSet` in
/// `AttributionJoin`), named here because the schema's migrations drop them too (schema 8).
extension Schema {
    /// Each live table and its copy (same columns).
    package static let recomputeCopies = [
        (live: "derived_presentations", copy: "recompute_presentations"),
        (live: "derived_conversions", copy: "recompute_conversions"),
    ]

    /// Drops what an interrupted recompute left (a daemon stopped during one).
    package static func dropRecomputeCopies(on connection: Connection) throws {
        for names in recomputeCopies { try connection.execute("DROP TABLE IF EXISTS \(names.copy)") }
    }
}
