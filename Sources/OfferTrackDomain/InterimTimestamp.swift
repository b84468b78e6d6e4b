/// A small RFC 3339 reader and writer for this module's own needs (rules bounds, report days, simulated records).
///
/// Interim: to be replaced by the shared `Timestamp` type once it lands. It follows SPEC section 3's `ts` rule:
/// `T`/`t` and `Z`/`z` accepted, a numeric offset allowed, second 60 and years outside 0001–9999 refused, fraction
/// digits after the third truncated.
enum InterimTimestamp {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// UTC epoch milliseconds of an RFC 3339 date-time, or nil when it is not one.
    static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        guard let year = digits(b, 0, 4), b[4] == 0x2D, let month = digits(b, 5, 2), b[7] == 0x2D,
            let day = digits(b, 8, 2), b[10] == 0x54 || b[10] == 0x74,
            let hour = digits(b, 11, 2), b[13] == 0x3A, let minute = digits(b, 14, 2), b[16] == 0x3A,
            let second = digits(b, 17, 2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var index = 19
        var millis: Int64 = 0
        if b[index] == 0x2E {
            index += 1
            var count = 0
            while index < b.count, let d = digit(b[index]) {
                if count < 3 { millis = millis * 10 + d }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in 0..<max(0, 3 - count) { millis *= 10 }
        }
        guard index < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch b[index] {
        case 0x5A, 0x7A:
            index += 1
        case 0x2B, 0x2D:
            guard b.count == index + 6, let oh = digits(b, index + 1, 2), b[index + 3] == 0x3A,
                let om = digits(b, index + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (b[index] == 0x2D ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1_000 + millis
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` for UTC epoch milliseconds.
    static func format(_ ms: Int64) -> String {
        format(ms, offsetMinutes: 0)
    }

    /// The same instant written in local time at `offsetMinutes` east of UTC (`Z` when zero).
    static func format(_ ms: Int64, offsetMinutes: Int64) -> String {
        let local = ms + offsetMinutes * 60_000
        let (days, msOfDay) = floorDivide(local, millisecondsPerDay)
        let (year, month, day) = civilFromDays(days)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        append(year, width: 4, to: &out, then: 0x2D)
        append(month, width: 2, to: &out, then: 0x2D)
        append(day, width: 2, to: &out, then: 0x54)
        append(msOfDay / 3_600_000, width: 2, to: &out, then: 0x3A)
        append(msOfDay / 60_000 % 60, width: 2, to: &out, then: 0x3A)
        append(msOfDay / 1_000 % 60, width: 2, to: &out, then: 0x2E)
        append(msOfDay % 1_000, width: 3, to: &out, then: nil)
        if offsetMinutes == 0 {
            out.append(0x5A)
        } else {
            let magnitude = abs(offsetMinutes)
            out.append(offsetMinutes < 0 ? 0x2D : 0x2B)
            append(magnitude / 60, width: 2, to: &out, then: 0x3A)
            append(magnitude % 60, width: 2, to: &out, then: nil)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` (0 ≤ value < 10^width, or wider when larger) zero-padded to `width` digits, then `separator`.
    private static func append(_ value: Int64, width: Int, to out: inout [UInt8], then separator: UInt8?) {
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(UInt8(0x30 + rest % 10))
            rest /= 10
        } while rest > 0
        for _ in digits.count..<Swift.max(width, digits.count) { out.append(0x30) }
        out.append(contentsOf: digits.reversed())
        if let separator { out.append(separator) }
    }

    /// The UTC date `YYYY-MM-DD` of UTC epoch milliseconds.
    static func formatDay(_ ms: Int64) -> String {
        let (year, month, day) = civilFromDays(floorDivide(ms, millisecondsPerDay).quotient)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func digit(_ byte: UInt8) -> Int64? {
        (0x30...0x39).contains(byte) ? Int64(byte - 0x30) : nil
    }

    private static func digits(_ b: [UInt8], _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for i in start..<start + count {
            guard let d = digit(b[i]) else { return nil }
            value = value * 10 + d
        }
        return value
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (month <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, month, day)
    }
}
