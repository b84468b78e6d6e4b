import OfferTrackDomain

/// A record's attribution columns as the per-user index stores them beside its entry (schema 15, `body`), one blob
/// the writer encodes in Swift (`encode`) and SQL can compute from a `records` row (`sql`, for the migration,
/// `rebuild` and `verify`), byte for byte the same: the record's `id`, `decision`, `offer_id`, `affiliate_token`,
/// `campaign_token`, `message_identifier`, `item_id`, `review_conversion`, `review_decision`, `review_reason` and
/// `review_note`, in that order. A text is its length in UTF-8 bytes in decimal, `:`, then its bytes; a code is
/// its one digit; either is `-` when NULL. The entry's `kind` and `ts` give the rest (`record(kind:ts:user:body:)`).
enum IndexedRecordBody {
    /// The body of the `records` row aliased `r`, in SQL.
    static let sql: String = {
        func text(_ column: String) -> String {
            "(CASE WHEN r.\(column) IS NULL THEN '-' ELSE length(CAST(r.\(column) AS BLOB)) || ':' || r.\(column) END)"
        }
        func code(_ column: String) -> String { "ifnull(r.\(column), '-')" }
        let fields = [
            text("id"), code("decision"), text("offer_id"), text("affiliate_token"), text("campaign_token"),
            text("message_identifier"), text("item_id"), text("review_conversion"), code("review_decision"),
            text("review_reason"), text("review_note"),
        ]
        return "CAST(\(fields.joined(separator: " || ")) AS BLOB)"
    }()

    /// `record`'s body.
    static func encode(_ record: Record) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.id.utf8.count + 24)
        func text(_ value: String?) {
            guard let value else { return bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: String(value.utf8.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: value.utf8)
        }
        func code(_ value: Int64?) {
            guard let value else { return bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: String(value).utf8)
        }
        text(record.id)
        switch record.body {
        case .capabilities(let decision):
            code(RecordColumnCodes.decisionCode(decision))
            for _ in 0..<9 { bytes.append(UInt8(ascii: "-")) }
        case .presented(let offer, _):
            bytes.append(contentsOf: "--".utf8)
            text(offer.affiliateToken)
            text(offer.campaignToken)
            text(offer.messageIdentifier)
            text(offer.itemID)
            bytes.append(contentsOf: "----".utf8)
        case .outcome(_, let decision, let offerId):
            code(decision.map(RecordColumnCodes.decisionCode))
            text(offerId)
            bytes.append(contentsOf: "--------".utf8)
        case .review(let review):
            bytes.append(contentsOf: "------".utf8)
            text(review.conversion)
            code(RecordColumnCodes.reviewDecisionCode(review.decision))
            text(review.reason?.rawValue)
            text(review.note)
        case .erasure(let ticket):
            // An erasure's ticket is kept in the note column (schema 12).
            bytes.append(contentsOf: "---------".utf8)
            text(ticket)
        }
        return bytes
    }

    /// The record of `user` an entry of `kind` at `ts` with `body` lists; nil when the body does not decode to a
    /// record of that kind.
    static func record(kind: Int64, ts: Int64, user: String, body: [UInt8]) -> Record? {
        body.withUnsafeBytes { record(kind: kind, ts: ts, user: user, body: $0) }
    }

    /// As `record(kind:ts:user:body:)`, reading the body where it lies (a column's bytes, not copied).
    static func record(kind: Int64, ts: Int64, user: String, body: UnsafeRawBufferPointer) -> Record? {
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
