import OfferTrackDomain

/// The body of an index entry that sealing kept (SPEC 12): the fields of its kind alone, texts packed
/// (`PackedText`), where `IndexedRecordBody` spells every column in decimal-prefixed text. A sealed entry has no
/// `records` row to be compared with, and is read far more often than written, so it is written once, by the seal
/// that keeps it, in the fewest bytes: a check's 31 bytes become 15, a presentation's about 53 become 32 (with
/// ULID-like ids). It starts with `marker`, which no `IndexedRecordBody` starts with, and
/// `IndexedRecordBody.record` reads both.
///
/// After the marker: the id, then for a check its decision's code (one byte); for a presentation its affiliate
/// token, campaign token, message identifier and item id; for an outcome its decision's code (`absentCode` when
/// none) and `offerId`. Reviews and erasures are never sealed (`SealKeeping.isNeverSealed`) and have none.
package enum SealedEntryBody {
    /// The first byte of every sealed body.
    package static let marker: UInt8 = 0x01
    /// A decision's code when the record has none.
    static let absentCode: UInt8 = 0xFF

    /// Whether `body` is a sealed body.
    package static func isSealed(_ body: UnsafeRawBufferPointer) -> Bool { body.first == marker }

    /// The sealed body of `record`; nil for a review or an erasure.
    package static func encode(_ record: Record) -> [UInt8]? {
        var bytes: [UInt8] = [marker]
        bytes.reserveCapacity(record.id.utf8.count + 8)
        PackedText.append(record.id, to: &bytes)
        switch record.body {
        case .capabilities(let decision):
            bytes.append(UInt8(RecordColumnCodes.decisionCode(decision)))
        case .presented(let offer, _):
            for token in [offer.affiliateToken, offer.campaignToken, offer.messageIdentifier, offer.itemID] {
                PackedText.append(token, to: &bytes)
            }
        case .outcome(_, let decision, let offerId):
            bytes.append(decision.map { UInt8(RecordColumnCodes.decisionCode($0)) } ?? absentCode)
            PackedText.append(offerId, to: &bytes)
        case .review, .erasure:
            return nil
        }
        return bytes
    }

    /// The record of `user` a sealed entry of `kind` at `ts` lists; nil when `body` is not a sealed body of a record
    /// of that kind.
    static func record(kind: UserIndexKind, ts: Int64, user: String, body: UnsafeRawBufferPointer) -> Record? {
        guard isSealed(body) else { return nil }
        var reader = PackedText.Reader(bytes: body, position: 1)
        guard let id = reader.text() ?? nil else { return nil }
        let recordBody: RecordBody
        switch kind {
        case .lapsingCheck, .otherCheck:
            guard let code = reader.byte(), let decision = RecordColumnCodes.decision(code: Int64(code)) else {
                return nil
            }
            recordBody = .capabilities(decision)
        case .loadedPresentation, .unloadedPresentation:
            guard let affiliateToken = reader.text(), let campaignToken = reader.text(),
                let messageIdentifier = reader.text(), let itemID = reader.text()
            else { return nil }
            let offer = Offer(
                affiliateToken: affiliateToken, campaignToken: campaignToken, messageIdentifier: messageIdentifier,
                itemID: itemID)
            recordBody = .presented(offer, loaded: kind == .loadedPresentation)
        case .subscribed, .declined:
            guard let code = reader.byte(), let offerId = reader.text() else { return nil }
            var decision: EligibilityDecision?
            if code != absentCode {
                guard let known = RecordColumnCodes.decision(code: Int64(code)) else { return nil }
                decision = known
            }
            recordBody = .outcome(subscribed: kind == .subscribed, decision: decision, offerId: offerId)
        case .review, .erasure:
            return nil
        }
        guard reader.atEnd else { return nil }
        return Record(id: id, ts: ts, user: user, body: recordBody)
    }
}
