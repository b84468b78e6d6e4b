import Foundation
import OfferTrackDomain
import OutputFormats
import SQLite
import TestSupport
import Testing
import WireFormat

@testable import AttributionJoin
@testable import JournalStore

/// Rules 4.0–4.7 are decided once (`AttributionRules`): the reference (`Attribution.attribute`), the journal's
/// bounded path (`BoundedRefresh`, a history limit of 0 sends every user there) and `explain` must give the verdict
/// computed by hand from the SPEC at every rule's boundary. Break a rule in `AttributionRules` and all three fail.
@Suite struct OneDecisionTests {
    /// F = 30 min, W = 2 h, H = 1 h; `Kiosk` is shared.
    static let settings = AttributionSettings(
        windowMs: 2 * hour, freshnessMs: 30 * minute, holdingMs: hour, sharedUsers: SharedUsers(["Kiosk"]))
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let t0 = Timestamp.parse("2026-11-28T10:00:00Z") ?? 0

    static func at(_ offset: Int64) -> String { Timestamp.format(t0 + offset) }

    static func check(_ id: String, _ offset: Int64, user: String = "u", capabilities: Int = 2) -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(at(offset))","user":"\#(user)","authorization":3,"capabilities":\#(capabilities)}"#
    }

    static func presented(_ id: String, _ offset: Int64, user: String = "u") -> String {
        #"{"type":"offer.presented","id":"\#(id)","ts":"\#(at(offset))","user":"\#(user)","offer":{"action":"subscribe","affiliateToken":"aff"}}"#
    }

    static func outcome(
        _ id: String, _ offset: Int64, user: String = "u", subscribed: Bool = true, offerId: String? = nil
    )
        -> String
    {
        let named = offerId.map { #","offerId":"\#($0)""# } ?? ""
        return
            #"{"type":"subscription.outcome","id":"\#(id)","ts":"\#(at(offset))","user":"\#(user)","outcome":"\#(subscribed ? "subscribed" : "declined")"\#(named)}"#
    }

    /// (what, the user, their lines, the verdict `reason-or-attributed lapse=<id|none>` computed by hand).
    static let cases: [(String, String, [String], String)] = [
        (
            "4.4 a check exactly F old is fresh", "u",
            [check("c", 0), presented("p", 30 * minute), outcome("o", 40 * minute)], "attributed lapse=none"
        ),
        (
            "4.4 a check F + 1 ms old is not", "u",
            [check("c", 0), presented("p", 30 * minute + 1), outcome("o", 40 * minute)],
            "eligibility_unknown lapse=none"
        ),
        (
            "4.4 a fresh check that is not eligible", "u",
            [check("c", 0, capabilities: 3), presented("p", minute), outcome("o", 2 * minute)],
            "not_eligible lapse=none"
        ),
        (
            "4.3 a conversion exactly W after", "u",
            [check("c", 0), presented("p", minute), outcome("o", minute + 2 * hour)], "attributed lapse=none"
        ),
        (
            "4.3 a conversion W + 1 ms after", "u",
            [check("c", 0), presented("p", minute), outcome("o", minute + 2 * hour + 1)], "outside_window lapse=none"
        ),
        (
            "4.2 the named presentation, stale, over the latest, fresh", "u",
            [
                check("c1", 0), presented("p1", 40 * minute), check("c2", 50 * minute), presented("p2", 55 * minute),
                outcome("o", hour, offerId: "p1"),
            ], "eligibility_unknown lapse=none"
        ),
        (
            "4.6 a lapse exactly H after lapses", "u",
            [
                check("c", 0), presented("p", minute), outcome("o", 2 * minute),
                outcome("d", 2 * minute + hour, subscribed: false),
            ], "attributed lapse=d"
        ),
        (
            "4.6 a lapse H + 1 ms after does not", "u",
            [
                check("c", 0), presented("p", minute), outcome("o", 2 * minute),
                check("late", 2 * minute + hour + 1),
            ], "attributed lapse=none"
        ),
        (
            "4.0 a shared id", "KIOSK",
            [
                check("c", 0, user: "KIOSK"), presented("p", minute, user: "KIOSK"),
                outcome("o", 2 * minute, user: "KIOSK"),
            ],
            "shared_user lapse=none"
        ),
    ]

    static func records(_ lines: [String]) throws -> [Record] {
        try lines.map { line in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else {
                throw SQLiteError(code: 0, message: "invalid test line \(line)")
            }
            return record
        }
    }

    static func verdict(_ status: ConversionStatus?, lapse: String?) -> String {
        let reason =
            switch status {
            case .unattributed(let reason)?: reason.rawValue
            case .attributed?: "attributed"
            case nil: "none"
            }
        return "\(reason) lapse=\(lapse ?? "none")"
    }

    @Test(arguments: cases.indices)
    func theReferenceDecides(index: Int) throws {
        let (what, _, lines, expected) = Self.cases[index]
        let conversion = Attribution.attribute(userRecords: try Self.records(lines), settings: Self.settings).conversion
        #expect(Self.verdict(conversion?.status, lapse: conversion?.lapse?.id) == expected, "\(what)")
    }

    @Test(arguments: cases.indices)
    func theBoundedPathDecidesAlike(index: Int) throws {
        let (what, _, lines, expected) = Self.cases[index]
        let scratch = ScratchDirectory("one-decision")
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: Self.settings, tuning: .init(historyLimit: 0))
        for line in lines { _ = try writer.append([try JournalRecordLines.submission(line)], receivedAt: 0) }
        let found = try Connection(path: path, mode: .readOnly).scalarText(
            "SELECT coalesce(reason, 'attributed') || ' lapse=' || coalesce(lapse_id, 'none') FROM derived_conversions")
        #expect(found == expected, "\(what)")
    }

    @Test(arguments: cases.indices)
    func explainRendersTheSameDecision(index: Int) throws {
        let (what, user, lines, expected) = Self.cases[index]
        let rules = CommissionRules(currency: "USD", settings: Self.settings, rules: [])
        let explanation = Explanation(
            user: user, userRecords: try Self.records(lines), rules: rules, asOf: Self.t0 + 10 * Self.hour)
        let json = ExplanationFormat.json(explanation)
        let reason = expected.split(separator: " ")[0]
        let lapse = expected.split(separator: "=")[1]
        #expect(
            json.contains(reason == "attributed" ? #""status":"attributed""# : #""reason":"\#(reason)""#),
            "\(what): \(json)")
        #expect(json.contains(lapse == "none" ? #""lapse":null"# : #""lapse":{"id":"\#(lapse)""#), "\(what): \(json)")
        // The text names the rule that decided, as decided.
        let text = ExplanationFormat.text(explanation)
        #expect(text.contains(reason == "attributed" ? "verdict: attributed" : "(\(reason))"), "\(what): \(text)")
    }
}
