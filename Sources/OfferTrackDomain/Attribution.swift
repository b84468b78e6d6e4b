/// The attribution rule of SPEC section 4, a pure function of one user's journaled records.
public enum Attribution {
    /// Attributes one user's records (all of them, in any order; the result does not depend on the order).
    ///
    /// Records are ordered by `(ts, id)` with ids compared as UTF-8 bytes. Every record must belong to the same
    /// `user` (group the journal by user first): `user` is not looked at, so an `offerId` naming another user's
    /// presentation finds nothing here and falls back, as rule 4.2 requires.
    public static func attribute(userRecords: [Record], settings: AttributionSettings) -> UserAttribution {
        let ordered = isOrdered(userRecords) ? userRecords : RecordOrder.sorted(userRecords)
        var presentations: [PresentationFact] = []
        // Per presentation: rule 4.4's verdict.
        var verdicts: [AttributionRules.Eligibility] = []
        var latestCheck: (ts: Int64, decision: EligibilityDecision)?
        var conversion: (record: Record, offerId: String?, presentationsBefore: Int, position: Int)?
        var reviews: [(reference: RecordReference, review: Review)] = []

        for (position, record) in ordered.enumerated() {
            switch record.body {
            case .capabilities(let decision):
                latestCheck = (record.ts, decision)
            case .presented(let offer, let loaded):
                guard loaded else { continue }
                let verdict = AttributionRules.eligibility(check: latestCheck, presentationAt: record.ts, settings)
                presentations.append(
                    PresentationFact(id: record.id, ts: record.ts, offer: offer, eligible: verdict == .passes))
                verdicts.append(verdict)
            case .outcome(let subscribed, _, let offerId):
                if subscribed, conversion == nil {
                    conversion = (record, offerId, presentations.count, position)
                }
            case .review(let review):
                reviews.append((RecordReference(id: record.id, ts: record.ts), review))
            case .erasure:
                continue
            }
        }

        guard let (outcome, offerId, before, position) = conversion else {
            return UserAttribution(presentations: presentations, conversion: nil)
        }
        let review = latestReview(of: outcome.id, among: reviews)
        // Rule 4.0: a shared id's conversion is unattributed, and rules 2–7 are not applied to it.
        if AttributionRules.isShared(outcome.user, settings) {
            let result = Conversion(
                id: outcome.id, ts: outcome.ts, status: .unattributed(.sharedUser), presentation: nil, review: review)
            return UserAttribution(presentations: presentations, conversion: result)
        }
        let named = offerId.flatMap { id in presentations[..<before].lastIndex { ExactString.equals($0.id, id) } }
        let index = AttributionRules.candidate(named: named, latest: before > 0 ? before - 1 : nil)
        let status = AttributionRules.status(
            conversionAt: outcome.ts, candidate: index.map { (presentations[$0].ts, verdicts[$0]) }, settings)
        let lapse = status.isAttributed ? firstLapse(in: ordered[(position + 1)...], after: outcome.ts, settings) : nil
        let result = Conversion(
            id: outcome.id, ts: outcome.ts, status: status, presentation: index.map { presentations[$0] }, lapse: lapse,
            review: review)
        return UserAttribution(presentations: presentations, conversion: result)
    }

    /// Rule 4.7: the latest review, in journal order, naming `conversionId` (ids compared by their bytes).
    private static func latestReview(
        of conversionId: String, among reviews: [(reference: RecordReference, review: Review)]
    ) -> ConversionReview? {
        // `reviews` are in journal order: the last one naming the conversion is the latest.
        guard let latest = reviews.last(where: { ExactString.equals($0.review.conversion, conversionId) })
        else { return nil }
        return ConversionReview(
            record: latest.reference, decision: latest.review.decision, reason: latest.review.reason)
    }

    /// Rule 4.6: the first lapse record (in journal order) of `later` in the holding period of a conversion at `t`.
    private static func firstLapse(
        in later: ArraySlice<Record>, after t: Int64, _ settings: AttributionSettings
    ) -> RecordReference? {
        let end = settings.qualifiesAt(conversionAt: t)
        for record in later {
            guard record.ts <= end else { return nil }
            if AttributionRules.isInHoldingPeriod(record.ts, conversionAt: t, settings),
                AttributionRules.isLapse(record.body)
            {
                return RecordReference(id: record.id, ts: record.ts)
            }
        }
        return nil
    }

    /// Whether `records` are already in journal order (usual for one user's records arriving together).
    private static func isOrdered(_ records: [Record]) -> Bool {
        var index = 1
        while index < records.count {
            if !RecordOrder.precedes(records[index - 1], records[index]) { return false }
            index += 1
        }
        return true
    }
}
