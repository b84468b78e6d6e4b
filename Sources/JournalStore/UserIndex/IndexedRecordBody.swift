import OfferTrackDomain

/// A record's attribution columns as the per-user index stores them beside its entry (schema 15, `body`), one blob
/// the writer encodes in Swift (`encode`) and SQL can compute from a `records` row (`sql`, for the migration,
/// `rebuild` and `verify`), byte for byte the same: the record's `id`, `decision`, `offer_id`, `affiliate_token`,
/// `campaign_token`, `message_identifier`, `item_id`, `review_conversion`, `review_decision`, `review_reason` and
/// `review_note`, in that order. A text is its length in UTF-8 bytes in decimal, `:`, then its bytes; a code is
/// its one digit; either is `-` when NULL. The entry's `kind` and `ts` give the rest (`record(kind:ts:user:body:)`).
package enum IndexedRecordBody {
    /// The `records` columns a body holds, in order, and whether each is a text (else a one-digit code).
    static let columns: [(name: String, isText: Bool)] = [
        ("id", true), ("decision", false), ("offer_id", true), ("affiliate_token", true), ("campaign_token", true),
        ("message_identifier", true), ("item_id", true), ("review_conversion", true), ("review_decision", false),
        ("review_reason", true), ("review_note", true),
    ]

    /// The body of the `records` row aliased `r`, in SQL.
    static let sql: String = {
        func text(_ column: String) -> String {
            "(CASE WHEN r.\(column) IS NULL THEN '-' ELSE length(CAST(r.\(column) AS BLOB)) || ':' || r.\(column) END)"
        }
        func code(_ column: String) -> String { "ifnull(r.\(column), '-')" }
        let fields = columns.map { $0.isText ? text($0.name) : code($0.name) }
        return "CAST(\(fields.joined(separator: " || ")) AS BLOB)"
    }()

    /// Writes a body's fields in order.
    struct Writer {
        private(set) var bytes: [UInt8] = []

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        /// A text field: its length in UTF-8 bytes in decimal, `:`, its bytes; `-` for nil.
        mutating func text(_ value: String?) {
            guard var value else { return absent() }
            value.withUTF8 { text(UnsafeRawBufferPointer($0)) }
        }

        mutating func text(_ utf8: UnsafeRawBufferPointer?) {
            guard let utf8 else { return absent() }
            bytes.append(contentsOf: String(utf8.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: utf8)
        }

        /// A code field: its digit; `-` for nil.
        mutating func code(_ value: Int64?) {
            guard let value else { return absent() }
            bytes.append(contentsOf: String(value).utf8)
        }

        /// A code field given as the text SQL makes of it.
        mutating func code(_ digits: UnsafeRawBufferPointer?) {
            guard let digits else { return absent() }
            bytes.append(contentsOf: digits)
        }

        /// `count` absent fields.
        mutating func absent(_ count: Int = 1) {
            for _ in 0..<count { bytes.append(UInt8(ascii: "-")) }
        }
    }

    /// `record`'s body.
    static func encode(_ record: Record) -> [UInt8] {
        var writer = Writer(capacity: record.id.utf8.count + 24)
        writer.text(record.id)
        switch record.body {
        case .capabilities(let decision):
            writer.code(RecordColumnCodes.decisionCode(decision))
            writer.absent(9)
        case .presented(let offer, _):
            writer.absent(2)
            writer.text(offer.affiliateToken)
            writer.text(offer.campaignToken)
            writer.text(offer.messageIdentifier)
            writer.text(offer.itemID)
            writer.absent(4)
        case .outcome(_, let decision, let offerId):
            writer.code(decision.map(RecordColumnCodes.decisionCode))
            writer.text(offerId)
            writer.absent(8)
        case .review(let review):
            writer.absent(6)
            writer.text(review.conversion)
            writer.code(RecordColumnCodes.reviewDecisionCode(review.decision))
            writer.text(review.reason?.rawValue)
            writer.text(review.note)
        case .erasure(let ticket):
            // An erasure's ticket is kept in the note column (schema 12).
            writer.absent(9)
            writer.text(ticket)
        }
        return writer.bytes
    }

    /// The record of `user` an entry of `kind` at `ts` with `body` lists; nil when the body does not decode to a
    /// record of that kind.
    static func record(kind: Int64, ts: Int64, user: String, body: [UInt8]) -> Record? {
        body.withUnsafeBytes { record(kind: kind, ts: ts, user: user, body: $0) }
    }

    /// As `record(kind:ts:user:body:)`, reading the body where it lies (a column's bytes, not copied). A body
    /// sealing rewrote (`SealedEntryBody`) is read too.
    package static func record(kind: Int64, ts: Int64, user: String, body: UnsafeRawBufferPointer) -> Record? {
        if SealedEntryBody.isSealed(body) {
            return UserIndexKind(rawValue: kind).flatMap {
                SealedEntryBody.record(kind: $0, ts: ts, user: user, body: body)
            }
        }
        var reader = Reader(bytes: body)
        guard let id = reader.text() ?? nil, let decision = reader.code(), let offerId = reader.text(),
            let affiliateToken = reader.text(), let campaignToken = reader.text(),
            let messageIdentifier = reader.text(), let itemID = reader.text(), let conversion = reader.text(),
            let reviewDecision = reader.code(), let reason = reader.text(), let note = reader.text(), reader.atEnd,
            let kind = UserIndexKind(rawValue: kind)
        else { return nil }
        let body: RecordBody
        switch kind {
        case .lapsingCheck, .otherCheck:
            guard let decision = decision.flatMap(RecordColumnCodes.decision(code:)) else { return nil }
            body = .capabilities(decision)
        case .loadedPresentation, .unloadedPresentation:
            let offer = Offer(
                affiliateToken: affiliateToken, campaignToken: campaignToken, messageIdentifier: messageIdentifier,
                itemID: itemID)
            body = .presented(offer, loaded: kind == .loadedPresentation)
        case .subscribed, .declined:
            body = .outcome(
                subscribed: kind == .subscribed, decision: decision.flatMap(RecordColumnCodes.decision(code:)),
                offerId: offerId)
        case .review:
            guard let conversion, let decision = reviewDecision.flatMap(RecordColumnCodes.reviewDecision(code:))
            else { return nil }
            body = .review(
                Review(
                    conversion: conversion, decision: decision, reason: reason.flatMap(ReviewReason.init(rawValue:)),
                    note: note))
        case .erasure:
            body = .erasure(ticket: note ?? "")
        }
        return Record(id: id, ts: ts, user: user, body: body)
    }

    /// Reads a body's fields in order; each read is nil when the bytes do not hold that field (an outer nil), and
    /// the field's value otherwise (an inner nil for `-`).
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var atEnd: Bool { position == bytes.count }

        mutating func text() -> String?? {
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: "-") {
                position += 1
                return .some(nil)
            }
            var length = 0
            while position < bytes.count, bytes[position] != UInt8(ascii: ":") {
                let digit = Int(bytes[position]) - Int(UInt8(ascii: "0"))
                guard (0...9).contains(digit), length < 1 << 40 else { return nil }
                length = length * 10 + digit
                position += 1
            }
            guard position < bytes.count, bytes.count - (position + 1) >= length else { return nil }
            let start = position + 1
            position = start + length
            return .some(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
        }

        mutating func code() -> Int64?? {
            guard position < bytes.count else { return nil }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "-") { return .some(nil) }
            let digit = Int64(byte) - Int64(UInt8(ascii: "0"))
            return (0...9).contains(digit) ? .some(digit) : nil
        }
    }
}
