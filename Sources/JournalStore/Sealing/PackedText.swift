/// A text stored in fewer bytes when it has a common shape, exactly reversible (`SealedEntryBody`): an id or token
/// of Crockford base32 capitals (a ULID, say) at 5 bits a character, a canonical UUID (lower or upper case hex) in
/// its 16 bytes, anything else as its UTF-8 bytes. A field starts with one LEB128 number: 0 for an absent text,
/// else 1 + (length << 2 | shape), the length in characters for base32, 0 for a UUID, in bytes for the rest.
package enum PackedText {
    /// How a text's bytes are stored.
    enum Shape: UInt64 {
        case utf8 = 0
        case base32 = 1
        case lowercaseUUID = 2
        case uppercaseUUID = 3
    }

    /// Crockford's base32 alphabet (no I, L, O, U).
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// Each byte's digit in `alphabet`, 0xFF for a byte that is not one.
    private static let digits: [UInt8] = {
        var digits = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { digits[Int(byte)] = UInt8(value) }
        return digits
    }()
    private static let dashes: Set<Int> = [8, 13, 18, 23]

    /// Appends `text` (nil: absent) to `bytes`.
    static func append(_ text: String?, to bytes: inout [UInt8]) {
        guard let text else { return appendNumber(0, to: &bytes) }
        let utf8 = Array(text.utf8)
        if let uuid = uuidBytes(utf8) {
            appendNumber(1 + (uuid.uppercase ? Shape.uppercaseUUID : Shape.lowercaseUUID).rawValue, to: &bytes)
            bytes.append(contentsOf: uuid.bytes)
        } else if utf8.count >= 8, utf8.allSatisfy({ digits[Int($0)] != 0xFF }) {
            appendNumber(1 + (UInt64(utf8.count) << 2 | Shape.base32.rawValue), to: &bytes)
            var accumulator: UInt32 = 0
            var bits = 0
            for byte in utf8 {
                accumulator = accumulator << 5 | UInt32(digits[Int(byte)])
                bits += 5
                if bits >= 8 {
                    bits -= 8
                    bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                }
            }
            if bits > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator << UInt32(8 - bits))) }
        } else {
            appendNumber(1 + (UInt64(utf8.count) << 2 | Shape.utf8.rawValue), to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    /// The 16 bytes of a canonical UUID in one case (digits are both); nil for any other text.
    private static func uuidBytes(_ utf8: [UInt8]) -> (bytes: [UInt8], uppercase: Bool)? {
        guard utf8.count == 36 else { return nil }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(32)
        var lower = false
        var upper = false
        for (position, byte) in utf8.enumerated() {
            if dashes.contains(position) {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                lower = true
                nibbles.append(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                upper = true
                nibbles.append(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        guard !(lower && upper) else { return nil }
        return (stride(from: 0, to: 32, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }, upper)
    }

    /// Appends `value` as LEB128.
    static func appendNumber(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Reads packed fields in order; each read is nil when the bytes do not hold a well-formed field.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        var atEnd: Bool { position == bytes.count }

        /// A LEB128 number of at most 63 bits.
        mutating func number() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 63 {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        /// One byte.
        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            position += 1
            return bytes[position - 1]
        }

        /// A text field: an outer nil when malformed, an inner nil when absent.
        mutating func text() -> String?? {
            guard let header = number() else { return nil }
            guard header > 0 else { return .some(nil) }
            guard let shape = Shape(rawValue: (header - 1) & 3) else { return nil }
            let length = (header - 1) >> 2
            switch shape {
            case .utf8:
                guard length <= bytes.count - position else { return nil }
                let start = position
                position += Int(length)
                return .some(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
            case .base32:
                guard length <= (bytes.count - position) * 8 / 5 else { return nil }
                let count = Int(length)
                let packed = (count * 5 + 7) / 8
                guard packed <= bytes.count - position else { return nil }
                var text: [UInt8] = []
                text.reserveCapacity(count)
                var accumulator: UInt32 = 0
                var bits = 0
                var next = position
                while text.count < count {
                    if bits < 5 {
                        accumulator = accumulator << 8 | UInt32(bytes[next])
                        next += 1
                        bits += 8
                    }
                    bits -= 5
                    text.append(PackedText.alphabet[Int(accumulator >> UInt32(bits) & 31)])
                }
                // The padding bits are zero, so that each text has one packing.
                guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
                position = next
                return .some(String(decoding: text, as: UTF8.self))
            case .lowercaseUUID, .uppercaseUUID:
                guard length == 0, bytes.count - position >= 16 else { return nil }
                let hex = Array((shape == .uppercaseUUID ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
                var text: [UInt8] = []
                text.reserveCapacity(36)
                for index in 0..<16 {
                    if dashes.contains(text.count) { text.append(UInt8(ascii: "-")) }
                    let byte = bytes[position + index]
                    text.append(hex[Int(byte >> 4)])
                    text.append(hex[Int(byte & 15)])
                }
                position += 16
                return .some(String(decoding: text, as: UTF8.self))
            }
        }
    }
}
