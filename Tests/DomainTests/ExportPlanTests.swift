import OutputFormats
import Testing

@testable import OfferTrackDomain

/// SPEC section 7's adjustment rules, computed by hand.
@Suite struct ExportPlanTests {
    static func row(_ id: String, at ts: Int64, amount: Int64, campaign: String? = nil) -> CommissionRow {
        CommissionRow(
            conversionId: id, convertedAt: ts, offerId: "p-\(id)", presentedAt: ts - 1000, affiliateToken: "aff",
            campaignToken: campaign, messageIdentifier: "join", itemID: nil, amountMinor: amount, currency: "USD")
    }

    static let day1: Int64 = 1_764_547_200_000  // 2025-12-01T00:00:00Z
    static let day2 = day1 + Timestamp.millisecondsPerDay

    @Test func firstDayHasOnlyCommissionRowsSortedByTimeThenIdBytes() {
        let plan = ExportPlan(
            day: "2025-12-01",
            current: [
                "2025-12-01": [
                    Self.row("b", at: Self.day1 + 5, amount: 500), Self.row("a", at: Self.day1 + 5, amount: 0),
                    Self.row("Z", at: Self.day1 + 1, amount: 700),
                ]
            ],
            inForce: [:])
        #expect(plan.lines.map(\.row.conversionId) == ["Z", "a", "b"])
        #expect(plan.lines.allSatisfy { $0.kind == .commission && $0.originalDate == nil })
        let csv = String(decoding: plan.csv(), as: UTF8.self).split(separator: "\n")
        #expect(csv[1] == "commission,Z,2025-12-01T00:00:00.001Z,p-Z,2025-11-30T23:59:59.001Z,aff,,join,,700,USD,")
        #expect(plan.changes.count == 3 && plan.changes.allSatisfy { $0.day == "2025-12-01" && $0.row != nil })
    }

    @Test func aChangedPublishedRowIsReversedThenReplacedInTheNextDay() throws {
        let old = Self.row("x", at: Self.day1 + 10, amount: 500)
        let new = Self.row("x", at: Self.day1 + 10, amount: 700, campaign: "a,\"b\"")
        let gone = Self.row("y", at: Self.day1 + 20, amount: 0)
        let added = Self.row("w", at: Self.day1 + 30, amount: 300)
        let plan = ExportPlan(
            day: "2025-12-02",
            current: ["2025-12-01": [new, added], "2025-12-02": [Self.row("t", at: Self.day2, amount: 100)]],
            inForce: ["2025-12-01": [ExactString("x"): old, ExactString("y"): gone]])
        let csv = String(decoding: plan.csv(), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(
            csv == [
                ExportPlan.header.joined(separator: ","),
                "adjustment,x,2025-12-01T00:00:00.010Z,p-x,2025-11-30T23:59:59.010Z,aff,,join,,-500,USD,2025-12-01",
                "adjustment,x,2025-12-01T00:00:00.010Z,p-x,2025-11-30T23:59:59.010Z,aff,\"a,\"\"b\"\"\",join,,700,USD,2025-12-01",
                "adjustment,y,2025-12-01T00:00:00.020Z,p-y,2025-11-30T23:59:59.020Z,aff,,join,,0,USD,2025-12-01",
                "adjustment,w,2025-12-01T00:00:00.030Z,p-w,2025-11-30T23:59:59.030Z,aff,,join,,300,USD,2025-12-01",
                "commission,t,2025-12-02T00:00:00.000Z,p-t,2025-12-01T23:59:59.000Z,aff,,join,,100,USD,",
            ])
        let changes = Dictionary(
            uniqueKeysWithValues: plan.changes.filter { $0.day == "2025-12-01" }.map { ($0.conversionId, $0.row) })
        #expect(changes.count == 3)
        #expect(changes["x"] == .some(new) && changes["y"] == .some(nil) && changes["w"] == .some(added))
        #expect(plan.changes.filter { $0.day == "2025-12-02" }.map(\.conversionId) == ["t"])
        let manifest = String(
            decoding: try plan.manifest(csv: plan.csv(), currency: "USD", rulesSha256: "r", generatedAt: 0),
            as: UTF8.self)
        #expect(manifest.contains(#""rows":5,"commissionMinor":100,"adjustmentMinor":500,"#))
    }

    @Test func anUnchangedPublishedRowProducesNothing() {
        let same = Self.row("x", at: Self.day1, amount: 500)
        let plan = ExportPlan(
            day: "2025-12-02", current: ["2025-12-01": [same]], inForce: ["2025-12-01": [ExactString("x"): same]])
        #expect(plan.lines.isEmpty)
        #expect(String(decoding: plan.csv(), as: UTF8.self) == ExportPlan.header.joined(separator: ",") + "\n")
    }
}
