import Foundation

/// What a file holds, byte for byte.
enum FileBytes {
    /// Whether the file at `path` holds `text`'s bytes anywhere (false when it cannot be read).
    static func contain(_ path: String, _ text: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(text.utf8)) != nil
    }
}
