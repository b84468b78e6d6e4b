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
        // Per presentation: why rule 4.4 fails for it, nil when it passes.
        var failures: [UnattributedReason?] = []
        var latestCheck: (ts: Int64, decision: EligibilityDecision)?
        var conversion: (record: Record, offerId: String?, presentationsBefore: Int, position: Int)?
        var reviews: [(reference: RecordReference, review: Review)] = []

        for (position, record) in ordered.enumerated() {
            switch record.body {
            case .capabilities(let decision):
                latestCheck = (record.ts, decision)
            case .presented(let offer, let loaded):
                guard loaded else { continue }
                let failure: UnattributedReason?
                if let check = latestCheck, record.ts - check.ts <= settings.freshnessMs {
                    failure = check.decision == .eligible ? nil : .notEligible
                } else {
                    failure = .eligibilityUnknown
                }
                presentations.append(
                    PresentationFact(id: record.id, ts: record.ts, offer: offer, eligible: failure == nil))
                failures.append(failure)
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
        if settings.sharedUsers.contains(outcome.user) {
            let result = Conversion(
                id: outcome.id, ts: outcome.ts, status: .unattributed(.sharedUser), presentation: nil, review: review)
            return UserAttribution(presentations: presentations, conversion: result)
        }
        // Rule 4.2: the named presentation when valid, else the latest loaded one before the conversion.
        var candidateIndex: Int? = before > 0 ? before - 1 : nil
        if let offerId,
            let named = presentations[..<before].lastIndex(where: { ExactString.equals($0.id, offerId) })
        {
            candidateIndex = named
        }
        guard let index = candidateIndex else {
            let result = Conversion(
                id: outcome.id, ts: outcome.ts, status: .unattributed(.noPresentation), presentation: nil,
                review: review)
            return UserAttribution(presentations: presentations, conversion: result)
        }
        let candidate = presentations[index]
        let status: ConversionStatus
        if outcome.ts - candidate.ts > settings.windowMs {
            status = .unattributed(.outsideWindow)
        } else if let failure = failures[index] {
            status = .unattributed(failure)
        } else {
            status = .attributed
        }
        let lapse = status.isAttributed ? firstLapse(in: ordered[(position + 1)...], after: outcome.ts, settings) : nil
        let result = Conversion(
            id: outcome.id, ts: outcome.ts, status: status, presentation: candidate, lapse: lapse, review: review)
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

    /// Rule 4.6: the first lapse record (in journal order) of `later` with `t < ts <= t + H`.
    private static func firstLapse(
        in later: ArraySlice<Record>, after t: Int64, _ settings: AttributionSettings
    ) -> RecordReference? {
        let end = settings.qualifiesAt(conversionAt: t)
        for record in later {
            guard record.ts <= end else { return nil }
            if record.ts > t, isLapse(record) { return RecordReference(id: record.id, ts: record.ts) }
        }
        return nil
    }

    /// A lapse record (rule 4.6): an authorized check without playback (`eligible` or `ineligible`), or a
    /// `declined` outcome, given or derived.
    public static func isLapse(_ record: Record) -> Bool {
        switch record.body {
        case .capabilities(let decision): decision == .eligible || decision == .ineligible
        case .outcome(let subscribed, _, _): !subscribed
        case .presented, .review, .erasure: false
        }
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
