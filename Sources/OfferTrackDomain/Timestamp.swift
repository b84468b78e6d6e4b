/// RFC 3339 timestamps as UTC epoch milliseconds (SPEC section 3's `ts` rule), without Foundation.
public enum Timestamp {
    /// The length of a UTC day in milliseconds (the one definition; days have no leap seconds here).
    public static let millisecondsPerDay: Int64 = 86_400_000

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into UTC epoch milliseconds, or nil when invalid.
    ///
    /// `T`/`t` and `Z`/`z` are accepted; a space separator, second 60 and years outside 0001–9999 are not.
    /// Fraction digits after the third are truncated before the offset is applied, so `.9999` is 999 ms.
    public static func parse(_ s: String) -> Int64? {
        var string = s
        return string.withUTF8 { parse(utf8: $0) }
    }

    /// Parses a `YYYY-MM-DD` date (years 0001–9999) into the epoch milliseconds of its UTC midnight.
    public static func parseDay(_ s: String) -> Int64? {
        var string = s
        return string.withUTF8 { bytes -> Int64? in
            guard bytes.count == 10, let days = parseDate(bytes) else { return nil }
            return days * millisecondsPerDay
        }
    }

    /// Formats epoch milliseconds as RFC 3339 UTC with milliseconds, e.g. `2026-11-28T10:15:00.000Z`.
    public static func format(_ ms: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(ms, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(ms)`'s UTF-8 bytes to `bytes`.
    public static func append(_ ms: Int64, to bytes: inout [UInt8]) {
        let (days, milliseconds) = floorDivide(ms, millisecondsPerDay)
        appendDate(days, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(milliseconds / 3_600_000, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(milliseconds / 60_000 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(milliseconds / 1000 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(milliseconds % 1000, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// 00:00Z of the UTC day containing epoch milliseconds `ms`.
    public static func startOfDay(_ ms: Int64) -> Int64 {
        floorDivide(ms, millisecondsPerDay).quotient * millisecondsPerDay
    }

    /// The UTC day number of epoch milliseconds `ms`: days since 1970-01-01, floored.
    public static func dayNumber(_ ms: Int64) -> Int64 {
        floorDivide(ms, millisecondsPerDay).quotient
    }

    /// Formats the UTC day containing epoch milliseconds `ms` as `YYYY-MM-DD`.
    public static func formatDay(_ ms: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10)
        appendDate(floorDivide(ms, millisecondsPerDay).quotient, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The byte-level parser behind ``parse(_:)``.
    static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 20, let days = parseDate(bytes) else { return nil }
        guard bytes[10] | 0x20 == UInt8(ascii: "t"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let hour = twoDigits(bytes, 11), hour < 24,
            let minute = twoDigits(bytes, 14), minute < 60,
            let second = twoDigits(bytes, 17), second < 60
        else { return nil }
        var index = 19
        var milliseconds: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, let digit = digitValue(bytes[index]) {
                if index - fractionStart < 3 { milliseconds = milliseconds * 10 + digit }
                index += 1
            }
            let digits = index - fractionStart
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { milliseconds *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                let offsetHour = twoDigits(bytes, index + 1), offsetHour < 24,
                let offsetMinute = twoDigits(bytes, index + 4), offsetMinute < 60
            else { return nil }
            offsetSeconds = offsetHour * 3600 + offsetMinute * 60
            if bytes[index] == UInt8(ascii: "-") { offsetSeconds = -offsetSeconds }
        default:
            return nil
        }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1000 + milliseconds
    }

    /// Parses and validates `YYYY-MM-DD` at the start of `bytes` into days since 1970-01-01.
    private static func parseDate(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let century = twoDigits(bytes, 0), let yearOfCentury = twoDigits(bytes, 2),
            let month = twoDigits(bytes, 5), let day = twoDigits(bytes, 8)
        else { return nil }
        let year = century * 100 + yearOfCentury
        guard year >= 1, month >= 1, month <= 12, day >= 1, day <= daysInMonth(year: year, month: month) else {
            return nil
        }
        return daysFromCivil(year: year, month: month, day: day)
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    @inline(__always)
    private static func digitValue(_ byte: UInt8) -> Int64? {
        let value = byte &- UInt8(ascii: "0")
        return value < 10 ? Int64(value) : nil
    }

    private static func twoDigits(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Int64? {
        guard let tens = digitValue(bytes[offset]), let ones = digitValue(bytes[offset + 1]) else { return nil }
        return tens * 10 + ones
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static func appendDate(_ days: Int64, to bytes: inout [UInt8]) {
        let (year, month, day) = civilFromDays(days)
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(year.magnitude, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &bytes)
    }

    /// Appends a non-negative value's decimal digits, zero-padded to at least `width`.
    private static func appendDigits(_ value: some BinaryInteger, width: Int, to bytes: inout [UInt8]) {
        var digits: [UInt8] = []
        var rest = UInt64(value)
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        for _ in digits.count..<max(digits.count, width) { bytes.append(UInt8(ascii: "0")) }
        bytes.append(contentsOf: digits.reversed())
    }
}

extension Timestamp {
    /// The instant `ms` written in local time `offsetMinutes` east of UTC (`+01:00`; `Z` when zero).
    public static func format(_ ms: Int64, offsetMinutes: Int64) -> String {
        guard offsetMinutes != 0 else { return format(ms) }
        let local = format(ms + offsetMinutes * 60_000).dropLast()
        let magnitude = abs(offsetMinutes)
        let hours = magnitude / 60 < 10 ? "0\(magnitude / 60)" : "\(magnitude / 60)"
        let minutes = magnitude % 60 < 10 ? "0\(magnitude % 60)" : "\(magnitude % 60)"
        return "\(local)\(offsetMinutes < 0 ? "-" : "+")\(hours):\(minutes)"
    }
}
