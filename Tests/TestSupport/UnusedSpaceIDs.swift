import Foundation
import SQLite

/// User ids of the simulator's shape (`u-` and 16 hex digits, 18 bytes) that lie in the unused space of a journal's
/// b-tree pages (`BTreePageSpace`): the copies SQLite leaves when it rebuilds a page, which forgetting a person
/// must not leave behind (SPEC 11).
public enum UnusedSpaceIDs {
    /// Those of `users` found in the unused space of the 4 KiB pages of the file at `path` (page 1 aside).
    public static func find(in path: String, among users: Set<String>) throws -> Set<String> {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var found = Set<String>()
        for start in stride(from: 4096, to: bytes.count - 4095, by: 4096) {
            let page = Array(bytes[start..<start + 4096])
            let ranges = page.withUnsafeBytes {
                BTreePageSpace.unusedRanges(of: $0, isFirstPage: false, usableSize: 4096)
            }
            for range in ranges ?? [] where range.count >= 18 {
                for offset in range.lowerBound...(range.upperBound - 18) where page[offset] == UInt8(ascii: "u") {
                    let candidate = String(decoding: page[offset..<offset + 18], as: UTF8.self)
                    if users.contains(candidate) { found.insert(candidate) }
                }
            }
        }
        return found
    }

    /// Every user of the journal at `path`.
    public static func users(of path: String) throws -> Set<String> {
        let connection = try Connection(path: path, mode: .readOnly)
        let select = try connection.prepare("SELECT user FROM users")
        defer { select.reset() }
        var users = Set<String>()
        while try select.step() { users.insert(select.text(0) ?? "") }
        return users
    }
}
