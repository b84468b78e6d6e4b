/// What sealing keeps of one user's records (SPEC section 12): the records rules 4.0–4.7 and `explain` can still
/// read once the days before `sealedBefore` are sealed, whatever records arrive later (none before the acceptance
/// horizon) and whatever H, holds, amounts or shared users the rules give.
///
/// Every rule reads an extreme record of a kind (the first `subscribed` outcome, the latest loaded presentation
/// before a time, the latest `capabilities` record before a presentation, the first lapse record after the
/// conversion) or every record of a kind (repeats, reviews). Kept here: each such record that lies in the sealed
/// days. Any set of records holding these and the unsealed ones gives the same attribution and explanation as the
/// whole history, so a seal interrupted between two users changes nothing either.
public enum SealKeeping {
    /// The positions in `ordered` (one user's records in `(ts, id)` order) of the records before `sealedBefore`
    /// that stay: every review and erasure, and
    /// - the conversion (rule 4.1), its repeats, its candidate presentation (4.2), that presentation's
    ///   eligibility record (4.4) and the first lapse record after the conversion (4.6, whatever H);
    /// - the latest loaded presentation and its eligibility record (the candidate of a later conversion without
    ///   an `offerId`), and the latest `capabilities` record (the eligibility record of a later presentation);
    /// - while the conversion is not sealed, every loaded presentation and its eligibility record (a later
    ///   conversion's `offerId` may name any of them).
    public static func kept(_ ordered: [Record], sealedBefore: Int64) -> Set<Int> {
        var sealedCount = 0
        while sealedCount < ordered.count, ordered[sealedCount].ts < sealedBefore { sealedCount += 1 }
        // One walk: each loaded presentation's eligibility record, the conversion, its first lapse record.
        var checkBefore: [Int?] = Array(repeating: nil, count: ordered.count)
        var latestCheck: Int?
        var conversion: Int?
        var repeats: [Int] = []
        var firstLapse: Int?
        for (position, record) in ordered.enumerated() {
            // Rule 4.6's lapse record is after the conversion's time, not only after it in order.
            if let conversion, firstLapse == nil, record.ts > ordered[conversion].ts,
                AttributionRules.isLapse(record.body)
            {
                firstLapse = position
            }
            switch record.body {
            case .capabilities: latestCheck = position
            case .presented(_, loaded: true): checkBefore[position] = latestCheck
            case .outcome(subscribed: true, _, _):
                if conversion == nil { conversion = position } else { repeats.append(position) }
            default: break
            }
        }
        var kept = Set<Int>()
        func keep(_ position: Int?) {
            guard let position, position < sealedCount else { return }
            kept.insert(position)
        }
        var latestSealedCheck: Int?
        var latestSealedLoaded: Int?
        for position in 0..<sealedCount {
            switch ordered[position].body {
            case .review, .erasure: kept.insert(position)
            case .capabilities: latestSealedCheck = position
            case .presented(_, loaded: true):
                latestSealedLoaded = position
                // A later conversion's `offerId` may name any of them while the conversion is not sealed.
                if conversion.map({ $0 >= sealedCount }) ?? true {
                    keep(position)
                    keep(checkBefore[position])
                }
            default: break
            }
        }
        keep(latestSealedCheck)
        keep(latestSealedLoaded)
        keep(latestSealedLoaded.flatMap { checkBefore[$0] })
        if let conversion, conversion < sealedCount {
            keep(conversion)
            repeats.forEach { keep($0) }
            let candidate = candidatePosition(of: conversion, in: ordered)
            keep(candidate)
            keep(candidate.flatMap { checkBefore[$0] })
            keep(firstLapse)
        }
        return kept
    }

    /// Whether a record is never sealed: reviews and erasures stay as records whatever their day.
    public static func isNeverSealed(_ record: Record) -> Bool {
        switch record.body {
        case .review, .erasure: true
        default: false
        }
    }

    /// Rule 4.2 for the conversion at `conversion`: the loaded presentation before it that its `offerId` names, else
    /// the latest loaded one before it.
    private static func candidatePosition(of conversion: Int, in ordered: [Record]) -> Int? {
        guard case .outcome(_, _, let offerId) = ordered[conversion].body else { return nil }
        var latest: Int?
        var named: Int?
        for position in 0..<conversion {
            guard case .presented(_, loaded: true) = ordered[position].body else { continue }
            latest = position
            if let offerId, ExactString.equals(ordered[position].id, offerId) { named = position }
        }
        return AttributionRules.candidate(named: named, latest: latest)
    }

}
