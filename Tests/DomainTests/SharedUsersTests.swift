import OfferTrackDomain
import Testing
import WireFormat

/// SPEC rule 4.0 and the rules file's `sharedUsers` (section 5), cases computed by hand.
@Suite struct SharedUsersTests {
    typealias A = AttributionRecords

    /// A user who was checked eligible, shown the offer and subscribed, reviewed twice, with a lapse and a repeat:
    /// attributed (and lapsed) unless the user is shared.
    static func history(_ user: String) -> [Record] {
        [
            A.check("c", 0, user: user), A.presented("p", 10, user: user),
            A.outcome("o", 20, offerId: "p", user: user),
            Record(
                id: "r1", ts: A.t0 + 30, user: user,
                body: .review(Review(conversion: "o", decision: .hold, reason: .test, note: nil))),
            Record(
                id: "r2", ts: A.t0 + 40, user: user,
                body: .review(Review(conversion: "o", decision: .void, reason: .fraud, note: "ring"))),
            A.outcome("o2", 50, user: user), A.check("lapse", 60, .ineligible, user: user),
        ]
    }

    static let holding = AttributionSettings(
        windowMs: A.window, freshnessMs: A.freshness, holdingMs: A.hour, sharedUsers: .defaults)

    @Test(
        arguments: [
            // user, shared list (nil: the SPEC's), shared?
            ("anonymous", nil, true), ("Anonymous", nil, true), ("GUEST", nil, true), ("N/A", nil, true),
            ("0", nil, true), ("-1", nil, true), ("00000000-0000-0000-0000-000000000000", nil, true),
            ("anonymous2", nil, false), ("anonymou", nil, false), (" anonymous", nil, false),
            // Lowercasing is ASCII only: a fullwidth or dotted capital is another user.
            ("\u{FF21}non", nil, false), ("\u{130}", ["i"], false),
            ("qa-device-7", ["QA-Device-7"], true), ("QA-DEVICE-7", ["qa-device-7"], true),
            ("anonymous", ["QA-Device-7"], false), ("anonymous", [], false), ("u1", [], false),
        ] as [(String, [String]?, Bool)])
    func sharedIdsMatchAfterASCIILowercasing(user: String, list: [String]?, shared: Bool) {
        var settings = Self.holding
        settings.sharedUsers = list.map(SharedUsers.init) ?? .defaults
        #expect(settings.sharedUsers.contains(user) == shared)
        let conversion = Attribution.attribute(userRecords: Self.history(user), settings: settings).conversion
        let review = ConversionReview(record: RecordReference(id: "r2", ts: A.t0 + 40), decision: .void, reason: .fraud)
        if shared {
            // Rule 4.0: no presentation, eligibility or lapse; the review and the repeats are still its own.
            #expect(
                conversion
                    == Conversion(
                        id: "o", ts: A.t0 + 20, status: .unattributed(.sharedUser), presentation: nil, lapse: nil,
                        review: review))
        } else {
            #expect(conversion?.status == .attributed)
            #expect(conversion?.presentation?.id == "p")
            #expect(conversion?.lapse == RecordReference(id: "lapse", ts: A.t0 + 60))
            #expect(conversion?.review == review)
        }
    }

    @Test func aSharedIdIsCountedButEarnsNothingAndExplainSaysWhy() {
        let rules = CommissionRules(
            currency: "USD", settings: Self.holding,
            rules: [CommissionRule(affiliateToken: "*", campaignToken: nil, amountMinor: 500, from: nil, until: nil)])
        let attribution = Attribution.attribute(userRecords: Self.history("Guest"), settings: Self.holding)
        // Its presentation still counts in the funnel, with rule 4.4's verdict.
        #expect(attribution.presentations.map(\.eligible) == [true])
        let commission = attribution.conversion.map { Commission.evaluate($0, rules: rules) }
        #expect(commission == Commission(amountMinor: 0, reason: .sharedUser))
        let explanation = Explanation(user: "Guest", userRecords: Self.history("Guest"), rules: rules, asOf: .max)
        #expect(explanation.status == .unattributed)
        #expect(explanation.reason == .sharedUser)
        #expect(explanation.conversion == RecordReference(id: "o", ts: A.t0 + 20))
        #expect(explanation.presentation == nil && explanation.eligibility == nil && explanation.lapse == nil)
        #expect(explanation.repeats == ["o2"])
        #expect(explanation.review?.decision == .void)
        #expect(explanation.state == nil && explanation.qualifiesAt == nil && explanation.amountMinor == 0)
    }

    static func rules(_ shared: String?) throws(RulesError) -> CommissionRules {
        let member = shared.map { #","sharedUsers":\#($0)"# } ?? ""
        return try RulesFile(bytes: Array(#"{"currency":"USD","rules":[]\#(member)}"#.utf8)).rules
    }

    @Test func theRulesFileListsSharedUsersOrTakesTheSPECs() throws {
        #expect(try Self.rules(nil).settings.sharedUsers == .defaults)
        #expect(SharedUsers.defaults.entries.count == 12)
        #expect(try Self.rules("[]").settings.sharedUsers == .none)
        #expect(!(try Self.rules("[]").settings.sharedUsers.contains("anonymous")))
        let custom = try Self.rules(#"["QA-1","qa-2","Anonymous","anonymous"]"#).settings.sharedUsers
        #expect(custom.entries == ["QA-1", "qa-2", "Anonymous", "anonymous"])
        #expect(custom.contains("qa-1") && custom.contains("QA-2") && custom.contains("ANONYMOUS"))
        #expect(!custom.contains("guest"))
        // A changed list is a change of settings (the daemon recomputes on reload).
        #expect(try Self.rules(#"["a"]"#).settings != Self.rules(#"["b"]"#).settings)
        #expect(try Self.rules(#"["A"]"#).settings == Self.rules(#"["a"]"#).settings)
        let thousand = "[" + (0..<1000).map { "\"u\($0)\"" }.joined(separator: ",") + "]"
        #expect(try Self.rules(thousand).settings.sharedUsers.entries.count == 1000)
    }

    @Test(arguments: [
        #""anonymous""#, "{}", "[1]", #"[""]"#, #"["a\u0001"]"#, #"["a","a"]"#,
        "[\"" + String(repeating: "x", count: 129) + "\"]",
        "[" + (0...1000).map { "\"u\($0)\"" }.joined(separator: ",") + "]",
    ])
    func aMalformedListIsRefusedNamingSharedUsers(list: String) {
        #expect(throws: RulesError.self) { try Self.rules(list) }
        do {
            _ = try Self.rules(list)
        } catch {
            #expect(error.path == "sharedUsers")
        }
    }
}

extension SharedUsersTests {
    /// `contains` first rules out users of a length no entry has (lowercasing keeps the length); entries of any
    /// length, up to a `user`'s 128 characters of 4 bytes each, are still found.
    @Test func entriesOfEveryLengthAreFoundAndOthersAreNot() {
        let long = String(repeating: "\u{1F600}", count: 128)
        let entries = ["x", String(repeating: "A", count: 63), String(repeating: "b", count: 64), long]
        let shared = SharedUsers(entries)
        for entry in entries {
            #expect(shared.contains(entry))
            #expect(shared.contains(entry.lowercased()))
        }
        #expect(shared.contains(String(repeating: "a", count: 63)))
        #expect(!shared.contains(String(repeating: "b", count: 65)))
        #expect(!shared.contains(String(repeating: "b", count: 63)))
        #expect(!shared.contains("y"))
        #expect(!shared.contains(long + "x"))
        #expect(!shared.contains(""))
        #expect(!SharedUsers([]).contains("x"))
        #expect(!SharedUsers([]).contains(""))
    }
}
