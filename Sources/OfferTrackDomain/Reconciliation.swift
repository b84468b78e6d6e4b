/// A conversion's status as the affiliate network reports it (SPEC section 13), in the order rows are sorted.
public enum NetworkStatus: String, Sendable, Equatable, Comparable, CaseIterable {
    case approved
    case pending
    case rejected

    /// What a conversion in `state` is on the network's side: `qualified` is approved; `pending` and `held` are
    /// pending; `lapsed` and `voided` are rejected.
    public init(_ state: QualificationState) {
        switch state {
        case .qualified: self = .approved
        case .pending, .held: self = .pending
        case .lapsed, .voided: self = .rejected
        }
    }

    /// The status named `text`, ASCII case ignored.
    public init?(ignoringCase text: String) {
        guard let status = Self(rawValue: text.asciiLowercased) else { return nil }
        self = status
    }

    public static func < (lhs: NetworkStatus, rhs: NetworkStatus) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// How one reconciliation row's counts compare (SPEC section 13).
public enum ReconciliationClass: String, Sendable, Equatable {
    /// Both sides counted the same.
    case matched
    /// Both counted some, not the same.
    case differs
    /// Only offertrack counted any.
    case onlyOurs = "only_ours"
    /// Only the network counted any.
    case onlyTheirs = "only_theirs"

    /// The class of `ours` beside `theirs` (not both 0).
    public init(ours: Int64, theirs: Int64) {
        if ours == theirs {
            self = .matched
        } else if ours == 0 {
            self = .onlyTheirs
        } else if theirs == 0 {
            self = .onlyOurs
        } else {
            self = .differs
        }
    }
}

/// One group of a reconciliation: the affiliate token (when the network's file has that column) and the campaign
/// token, empty for none.
public struct ReconciliationGroup: Sendable, Hashable {
    /// nil when groups are per campaign token alone.
    public var affiliateToken: String?
    /// `""` for conversions without a campaign token.
    public var campaignToken: String

    public init(affiliateToken: String?, campaignToken: String) {
        self.affiliateToken = affiliateToken
        self.campaignToken = campaignToken
    }
}

/// One row of `offertrack reconcile`: a group and status, with both sides' counts.
public struct ReconciliationRow: Sendable, Equatable {
    public var group: ReconciliationGroup
    public var status: NetworkStatus
    public var ours: Int64
    public var theirs: Int64
    public var rowClass: ReconciliationClass { ReconciliationClass(ours: ours, theirs: theirs) }

    public init(group: ReconciliationGroup, status: NetworkStatus, ours: Int64, theirs: Int64) {
        self.group = group
        self.status = status
        self.ours = ours
        self.theirs = theirs
    }
}

/// The month's conversions beside the network's conversion report (SPEC section 13): both sides' counts per group and
/// status, added up as they are read.
public struct Reconciliation: Sendable {
    /// Whether groups are per affiliate and campaign token (the network's file has an `affiliate_token` column).
    public let perAffiliate: Bool
    private var counts: [Key: (ours: Int64, theirs: Int64)] = [:]

    private struct Key: Hashable {
        var group: ReconciliationGroup
        var status: NetworkStatus
    }

    /// Why a count does not fit.
    public struct CountOverflow: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String { "a group's count does not fit in 64 bits" }
    }

    public init(perAffiliate: Bool) {
        self.perAffiliate = perAffiliate
    }

    /// Counts `conversion` on our side when it is an attributed conversion with an affiliate token, in its state at
    /// `asOf`; the caller gives only the month's conversions.
    public mutating func addOurs(_ conversion: EvaluatedConversion, asOf: Int64) throws(CountOverflow) {
        guard let state = conversion.state(asOf: asOf),
            let offer = conversion.conversion.presentation?.offer, let affiliate = offer.affiliateToken
        else { return }
        let group = ReconciliationGroup(
            affiliateToken: perAffiliate ? affiliate : nil, campaignToken: offer.campaignToken ?? "")
        try add(Key(group: group, status: NetworkStatus(state)), ours: 1, theirs: 0)
    }

    /// Counts `count` conversions the network reported for `group` with `status`; 0 adds nothing.
    public mutating func addTheirs(_ group: ReconciliationGroup, status: NetworkStatus, count: Int64)
        throws(CountOverflow)
    {
        guard count > 0 else { return }
        try add(Key(group: group, status: status), ours: 0, theirs: count)
    }

    private mutating func add(_ key: Key, ours: Int64, theirs: Int64) throws(CountOverflow) {
        let now = counts[key] ?? (0, 0)
        counts[key] = (try Self.sum(now.ours, ours), try Self.sum(now.theirs, theirs))
    }

    /// `a + b`, or `CountOverflow`.
    private static func sum(_ a: Int64, _ b: Int64) throws(CountOverflow) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw CountOverflow() }
        return sum
    }

    /// One row per group and status that either side counted, sorted by affiliate token, campaign token (bytes,
    /// empty first), then status (approved, pending, rejected).
    public var rows: [ReconciliationRow] {
        counts.map { key, value in
            ReconciliationRow(group: key.group, status: key.status, ours: value.ours, theirs: value.theirs)
        }.sorted(by: Self.precedes)
    }

    /// The totals per status over `rows`, for every status.
    public static func totals(_ rows: [ReconciliationRow]) throws(CountOverflow) -> [ReconciliationRow] {
        var totals = NetworkStatus.allCases.map {
            ReconciliationRow(
                group: ReconciliationGroup(affiliateToken: nil, campaignToken: ""), status: $0, ours: 0, theirs: 0)
        }
        for row in rows {
            guard let index = NetworkStatus.allCases.firstIndex(of: row.status) else { continue }
            totals[index].ours = try sum(totals[index].ours, row.ours)
            totals[index].theirs = try sum(totals[index].theirs, row.theirs)
        }
        return totals
    }

    private static func precedes(_ lhs: ReconciliationRow, _ rhs: ReconciliationRow) -> Bool {
        let left = Array((lhs.group.affiliateToken ?? "").utf8)
        let right = Array((rhs.group.affiliateToken ?? "").utf8)
        if left != right { return left.lexicographicallyPrecedes(right) }
        let leftCampaign = Array(lhs.group.campaignToken.utf8)
        let rightCampaign = Array(rhs.group.campaignToken.utf8)
        if leftCampaign != rightCampaign { return leftCampaign.lexicographicallyPrecedes(rightCampaign) }
        return lhs.status < rhs.status
    }
}
