import OfferTrackDomain

extension JSONParser {
    /// Parses a line that is one JSON object, keeping only the members named in `names`, with exactly the
    /// strictness, errors and byte offsets of ``parse(_:)-(UnsafeRawBufferPointer)``.
    ///
    /// The object itself is not built: each kept member's value (`null` included) is parsed as a ``JSONValue`` and
    /// handed to `keep` with its slot, in input order; every other member is checked and dropped. Member names are
    /// compared as bytes after unescaping, so a name with escapes that spells a kept name is that name. Returns
    /// false, having read nothing, when the first byte after whitespace is not `{` (such a line is no object, or no
    /// JSON: ``parse(_:)-(UnsafeRawBufferPointer)`` says which).
    public static func parseObject(
        _ bytes: UnsafeRawBufferPointer, keeping names: JSONMemberNames, _ keep: (Int, consuming JSONValue) -> Void
    ) throws(RecordError) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
        var parser = JSONParser(base: base, count: bytes.count)
        parser.skipWhitespace()
        guard parser.index < parser.count, parser.byte(parser.index) == UInt8(ascii: "{") else { return false }
        try parser.scanTopObject(names, keep)
        parser.skipWhitespace()
        guard parser.index == parser.count else { throw parser.failure("unexpected data after the JSON value") }
        return true
    }

    /// `parseObject(depth: 1)` without building the object: the same checks in the same order.
    private mutating func scanTopObject(
        _ names: JSONMemberNames, _ keep: (Int, consuming JSONValue) -> Void
    ) throws(RecordError) {
        index += 1
        skipWhitespace()
        if index < count, byte(index) == UInt8(ascii: "}") {
            index += 1
            return
        }
        var seen: UInt64 = 0
        var others = UnkeptNames()
        while true {
            guard index < count, byte(index) == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let start = index + 1
            let escaped = try scanString()
            // The name is looked up before the value is parsed (which reuses `scratch`); a repeat is reported after
            // it, where `parse` reports it.
            let slot: Int?
            var repeated = false
            if escaped {
                slot = scratch.withUnsafeBytes { names.slot(of: $0) }
                if slot == nil { repeated = scratch.withUnsafeBytes { !others.insert($0) } }
            } else {
                let name = UnsafeRawBufferPointer(start: base + start, count: index - 1 - start)
                slot = names.slot(of: name)
                if slot == nil { repeated = !others.insert(name) }
            }
            skipWhitespace()
            guard index < count, byte(index) == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            if let slot {
                let value = try parseValue(depth: 1)
                let bit: UInt64 = 1 << UInt64(slot)
                if seen & bit != 0 { throw failure("repeated member name") }
                seen |= bit
                keep(slot, value)
            } else {
                try skipValue(depth: 1)
                if repeated { throw failure("repeated member name") }
            }
            if try endOfObjectAfterMember() { return }
        }
    }

    /// `parseValue(depth:)` for a value that is not kept: a string or a number is only checked; anything else is
    /// parsed and dropped.
    private mutating func skipValue(depth: Int) throws(RecordError) {
        guard index < count else { throw failure("unexpected end of input") }
        switch byte(index) {
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try scanNumber()
        default: _ = try parseValue(depth: depth)
        }
    }
}

/// The names of the members of one object that a scan did not keep, remembered for the repeated-name check.
struct UnkeptNames {
    /// Above this many names, a set answers instead of comparing with each.
    private static let listLimit = 16

    /// The names' bytes, one after the other, while there are at most `listLimit`.
    private var bytes: [UInt8] = []
    /// Where each name in `bytes` ends.
    private var ends: [Int] = []
    /// Every name, once there are more than `listLimit`.
    private var set: Set<[UInt8]> = []

    /// Remembers `name`; false when it was already there (the same bytes, so the same scalars).
    mutating func insert(_ name: UnsafeRawBufferPointer) -> Bool {
        if ends.count < Self.listLimit {
            if contains(name) { return false }
            bytes.append(contentsOf: name)
            ends.append(bytes.count)
            return true
        }
        if set.isEmpty {
            var start = 0
            for end in ends {
                set.insert(Array(bytes[start..<end]))
                start = end
            }
        }
        return set.insert(Array(name)).inserted
    }

    private func contains(_ name: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        for end in ends {
            defer { start = end }
            guard end - start == name.count else { continue }
            var offset = 0
            while offset < name.count, bytes[start + offset] == name[offset] { offset += 1 }
            if offset == name.count { return true }
        }
        return false
    }
}
