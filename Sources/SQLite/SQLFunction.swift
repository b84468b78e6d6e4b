import CSQLite

/// The arguments of one call of a function defined with `Connection.defineBlobFunction`, valid only during it.
public struct SQLFunctionArguments {
    fileprivate let values: UnsafeMutablePointer<OpaquePointer?>?
    /// How many arguments the call has.
    public let count: Int

    /// Calls `body` with argument `index`'s text, as SQL converts it (an integer's decimal digits), in UTF-8; nil
    /// when the argument is NULL (or out of range). The bytes are valid only inside `body`.
    public func withText<R>(_ index: Int, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard index >= 0, index < count, let value = values?[index], sqlite3_value_type(value) != SQLITE_NULL else {
            return body(nil)
        }
        // `sqlite3_value_text` first, then `sqlite3_value_bytes` (SQLite's documented order for a conversion).
        let text = sqlite3_value_text(value)
        let length = Int(sqlite3_value_bytes(value))
        return body(UnsafeRawBufferPointer(start: text, count: text == nil ? 0 : length))
    }
}

extension Connection {
    /// Defines the deterministic SQL function `name` of `argumentCount` arguments on this connection: each call's
    /// result is `body`'s bytes as a blob (copied), or NULL when it returns nil.
    public func defineBlobFunction(
        _ name: String, argumentCount: Int32, _ body: @escaping (SQLFunctionArguments) -> [UInt8]?
    ) throws(SQLiteError) {
        let box = Unmanaged.passRetained(BlobFunction(body)).toOpaque()
        let rc = sqlite3_create_function_v2(
            handle, name, argumentCount, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box,
            { context, count, values in
                guard let context, let box = sqlite3_user_data(context) else { return }
                let function = Unmanaged<BlobFunction>.fromOpaque(box).takeUnretainedValue()
                guard let bytes = function.body(SQLFunctionArguments(values: values, count: Int(count))) else {
                    return sqlite3_result_null(context)
                }
                bytes.withUnsafeBytes { raw in
                    // A zero-length blob, not NULL, when there are no bytes.
                    guard let base = raw.baseAddress else { return sqlite3_result_zeroblob(context, 0) }
                    sqlite3_result_blob(context, base, Int32(raw.count), offertrack_sqlite_transient())
                }
            }, nil, nil,
            { box in
                // SQLite is done with the function (redefined, or the connection closed).
                if let box { Unmanaged<BlobFunction>.fromOpaque(box).release() }
            })
        // On failure SQLite has already called the destructor, which released the box.
        guard rc == SQLITE_OK else { throw lastError(sql: nil) }
    }
}

/// A function's Swift body, kept alive by SQLite until its destructor runs.
private final class BlobFunction {
    let body: (SQLFunctionArguments) -> [UInt8]?
    init(_ body: @escaping (SQLFunctionArguments) -> [UInt8]?) { self.body = body }
}
