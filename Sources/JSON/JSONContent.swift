import OfferTrackDomain

/// SPEC section 2's "identical content" relation between two parsed JSON values.
public enum JSONContent {
    /// Whether `a` and `b` have identical content: objects with the same member names (order ignored) and equal
    /// values, arrays equal in order, strings equal by their exact scalars after unescaping (no Unicode
    /// normalization), numbers equal by exact decimal value (`1`, `1.0`, `10e-1` are equal, `-0` equals `0`).
    public static func isSame(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null):
            return true
        case (.bool(let x), .bool(let y)):
            return x == y
        case (.string(let x), .string(let y)):
            return isSameString(x, y)
        case (.number(let x), .number(let y)):
            return isSameNumber(x, y)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { isSame($0, $1) }
        case (.object(let x), .object(let y)):
            return isSameObject(x, y)
        default:
            return false
        }
    }

    /// Exact scalar equality; Swift's `==` on `String` would apply canonical equivalence instead.
    static func isSameString(_ a: String, _ b: String) -> Bool { ExactString.equals(a, b) }

    /// Member sets compared regardless of order; member names are unique (the parser refuses repeats).
    private static func isSameObject(_ a: JSONObject, _ b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        if a.members.count > 16 {
            // Large objects: a hash lookup keeps a hostile 64 KiB line from costing quadratic time.
            var index: [ExactString: JSONValue] = [:]
            for member in b.members { index[ExactString(member.key)] = member.value }
            for member in a.members {
                guard let other = index[ExactString(member.key)], isSame(member.value, other) else { return false }
            }
            return true
        }
        for member in a.members {
            guard let other = b.members.first(where: { isSameString($0.key, member.key) }),
                isSame(member.value, other.value)
            else { return false }
        }
        return true
    }

    /// Numeric equality of two JSON number literals, computed exactly on their decimal digits.
    static func isSameNumber(_ a: JSONNumber, _ b: JSONNumber) -> Bool {
        if a.literal == b.literal { return true }
        guard let x = Decimal(a.literal), let y = Decimal(b.literal) else { return false }
        return x == y
    }

    /// A number as sign × significand × 10^exponent with no leading or trailing zeros in the significand;
    /// zero has an empty significand, no sign and exponent 0. The exponent is kept as exact decimal digits so
    /// that even absurd literals (`1e99999999999999999999999`) compare exactly.
    private struct Decimal: Equatable {
        var negative = false
        var significand: [UInt8] = []
        var exponent = BigInteger()

        init?(_ literal: String) {
            var integerDigits: [UInt8] = []
            var fractionDigits: [UInt8] = []
            var exponentNegative = false
            var exponentDigits: [UInt8] = []
            var part = 0  // 0 integer, 1 fraction, 2 exponent
            for byte in literal.utf8 {
                switch byte {
                case UInt8(ascii: "-"):
                    if part == 2 { exponentNegative = true } else { negative = true }
                case UInt8(ascii: "+"): break
                case UInt8(ascii: "."): part = 1
                case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let digit = byte - UInt8(ascii: "0")
                    switch part {
                    case 0: integerDigits.append(digit)
                    case 1: fractionDigits.append(digit)
                    default: exponentDigits.append(digit)
                    }
                default: return nil
                }
            }
            // value = 0.(integerDigits fractionDigits) × 10^(exponentLiteral + integerDigits.count)
            var digits = integerDigits + fractionDigits
            var shift = integerDigits.count
            let leadingZeros = digits.prefix { $0 == 0 }.count
            digits.removeFirst(leadingZeros)
            shift -= leadingZeros
            while digits.last == 0 { digits.removeLast() }
            guard !digits.isEmpty else {
                negative = false
                return
            }
            significand = digits
            exponent = BigInteger(negative: exponentNegative, mostSignificantFirst: exponentDigits)
            exponent.add(shift)
        }
    }

    /// A minimal signed decimal integer: only what exponent normalization needs.
    private struct BigInteger: Equatable {
        var negative = false
        /// Magnitude digits, least significant first, no trailing (most significant) zeros; empty for zero.
        var digits: [UInt8] = []

        init(negative: Bool = false, digits: [UInt8] = []) {
            self.negative = negative
            self.digits = digits
        }

        /// An integer from its digits written most significant first (leading zeros allowed).
        init(negative: Bool, mostSignificantFirst written: [UInt8]) {
            self.init(negative: negative, digits: Array(written.drop { $0 == 0 }.reversed()))
        }

        /// Adds a machine integer exactly.
        mutating func add(_ value: Int) {
            guard value != 0 else { return }
            var other = BigInteger(negative: value < 0, digits: [])
            var rest = value.magnitude
            while rest > 0 {
                other.digits.append(UInt8(rest % 10))
                rest /= 10
            }
            if digits.isEmpty {
                self = other
            } else if negative == other.negative {
                digits = Self.sum(digits, other.digits)
            } else if Self.isLess(digits, other.digits) {
                digits = Self.difference(other.digits, digits)
                negative = other.negative
            } else {
                digits = Self.difference(digits, other.digits)
            }
            if digits.isEmpty { negative = false }
        }

        static func == (lhs: BigInteger, rhs: BigInteger) -> Bool {
            lhs.digits == rhs.digits && (lhs.digits.isEmpty || lhs.negative == rhs.negative)
        }

        private static func isLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            if a.count != b.count { return a.count < b.count }
            for (x, y) in zip(a.reversed(), b.reversed()) where x != y { return x < y }
            return false
        }

        private static func sum(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
            var result: [UInt8] = []
            var carry: UInt8 = 0
            for position in 0..<max(a.count, b.count) {
                let total = (position < a.count ? a[position] : 0) + (position < b.count ? b[position] : 0) + carry
                result.append(total % 10)
                carry = total / 10
            }
            if carry > 0 { result.append(carry) }
            return result
        }

        /// `a - b` for magnitudes with `a >= b`.
        private static func difference(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
            var result: [UInt8] = []
            var borrow: UInt8 = 0
            for position in 0..<a.count {
                let subtrahend = (position < b.count ? b[position] : 0) + borrow
                if a[position] >= subtrahend {
                    result.append(a[position] - subtrahend)
                    borrow = 0
                } else {
                    result.append(a[position] + 10 - subtrahend)
                    borrow = 1
                }
            }
            while result.last == 0 { result.removeLast() }
            return result
        }
    }
}
