import SQLite

/// `IndexedRecordBody.sql` as an SQL function of a connection, computed by the writer's own encoder: what
/// `rebuild` lists a million records with, where SQL's concatenation of eleven fields cost about a third of the
/// listing's time. `verify` keeps comparing every entry with the SQL expression, a second implementation.
extension IndexedRecordBody {
    /// The function's name.
    static let functionName = "offertrack_index_body"

    /// The body of the `records` row aliased `r`, as a call of the function (defined on the connection first:
    /// `defineFunction(on:)`).
    static let functionCall =
        "\(functionName)(\(columns.map { "r.\($0.name)" }.joined(separator: ", ")))"

    /// Defines the function on `connection`.
    static func defineFunction(on connection: Connection) throws {
        try connection.defineBlobFunction(functionName, argumentCount: Int32(columns.count)) { arguments in
            var writer = Writer(capacity: 64)
            for (index, column) in columns.enumerated() {
                arguments.withText(index) { column.isText ? writer.text($0) : writer.code($0) }
            }
            return writer.bytes
        }
    }
}
