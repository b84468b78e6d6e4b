import JSON
import OfferTrackDomain

/// SPEC section 2's "identical content" of two record lines.
enum LineContent {
    /// Whether both lines parse to equal JSON objects (member order, whitespace and escapes ignored).
    static func isSame(_ stored: [UInt8], _ incoming: [UInt8]) -> Bool {
        guard let a = try? JSONParser.parse(stored), let b = try? JSONParser.parse(incoming) else { return false }
        return JSONContent.isSame(a, b)
    }
}
