import Simulator
import Testing
import WireFormat

@testable import OfferTrackDomain

/// `offertrack simulate`: determinism, counts, validity of every line and the variety of the workload.
@Suite struct SimulatorTests {
    static let sample = Array(WorkloadSimulator(users: 2_000, seed: 2026))

    /// The value of a string member as written in a line (the simulator writes no spaces).
    static func member(_ name: String, in line: String) -> String? {
        let marker = "\"\(name)\":\""
        guard let start = line.firstRange(of: marker)?.upperBound,
            let end = line[start...].firstIndex(of: "\"")
        else { return nil }
        return String(line[start..<end])
    }

    @Test func sameArgumentsGiveTheSameLines() {
        let first = Array(WorkloadSimulator(users: 300, seed: 9, days: 3).lines)
        let second = Array(WorkloadSimulator(users: 300, seed: 9, days: 3).lines)
        #expect(first == second)
        #expect(first.count > 300)
    }

    @Test func differentSeedsOrStartsGiveDifferentLines() {
        let base = Array(WorkloadSimulator(users: 50, seed: 1).lines)
        #expect(base != Array(WorkloadSimulator(users: 50, seed: 2).lines))
        #expect(base != Array(WorkloadSimulator(users: 50, seed: 1, start: 1_800_000_000_000).lines))
    }

    /// The SHA-256 of a small workload: a change here changes every benchmark and demo; update it deliberately.
    @Test func outputIsPinnedAcrossMachines() {
        let bytes = Array(WorkloadSimulator(users: 40, seed: 1).lines.joined(separator: "\n").utf8)
        #expect(SHA256.hex(of: bytes) == Self.golden)
    }

    static let golden = "8fb64ce2f1a223c5a138cac51d9fe26e56d177b9fee5720cdd02c81c14dd4d6f"

    /// Reviews and signed-out visits (rule 4.0) were added with random streams and ids of their own: without them
    /// the workload is byte for byte the one pinned before (the golden hash of the version before reviews).
    @Test func reviewsAndSignedOutVisitsLeaveEveryOtherLineAsItWas() {
        let simulator = WorkloadSimulator(users: 40, seed: 1)
        #expect(simulator.contains { $0.record.user == "anonymous" })
        let withoutReviews = simulator.filter {
            $0.record.type != .review && $0.record.type != .erasure && $0.record.user != "anonymous"
        }.map(\.line)
        #expect(SHA256.hex(of: Array(withoutReviews.joined(separator: "\n").utf8)) == Self.goldenBeforeReviews)
        let reviews = WorkloadSimulator(users: 2_000, seed: 1).filter { $0.record.type == .review }
        #expect(reviews.count > 10)
        #expect(
            Set(
                reviews.compactMap { record -> ReviewDecision? in
                    guard case .review(let review) = record.record.body else { return nil }
                    return review.decision
                }) == [.void, .hold, .release])
    }

    static let goldenBeforeReviews = "f59200df932a3293318be4635effca65c0d589a900e60d7e307e6239049f3a70"

    @Test func zeroUsersIsEmpty() {
        #expect(Array(WorkloadSimulator(users: 0)).isEmpty)
    }

    @Test func generationIsLazy() {
        let first = Array(WorkloadSimulator(users: 10_000_000, seed: 3).prefix(5))
        #expect(first.count == 5)
    }

    @Test func everyUserAppearsAndIdsAreUnique() {
        let originals = Self.sample.filter { !$0.isDuplicate }
        let users = Set(originals.map(\.record.user))
        #expect(users.contains("anonymous"))
        #expect(users.subtracting(["anonymous"]).count == 2_000)
        #expect(Set(originals.map(\.record.id)).count == originals.count)
        let lines = Set(originals.map(\.line))
        for duplicate in Self.sample where duplicate.isDuplicate {
            #expect(lines.contains(duplicate.line))
        }
        let duplicates = Self.sample.count - originals.count
        #expect(duplicates > 0 && duplicates < Self.sample.count / 20)
    }

    /// Apps' records: ids in time order (a review's id is `rv-` and the id of the conversion it names, an
    /// erasure's `er-` and its own time).
    @Test func idsAreTimeOrdered() {
        let originals = Self.sample.filter {
            !$0.isDuplicate && $0.record.type != .review && $0.record.type != .erasure
        }.map(\.record)
        let byId = originals.sorted { RecordOrder.idPrecedes($0.id, $1.id) }
        #expect(zip(byId, byId.dropFirst()).allSatisfy { $0.ts <= $1.ts })
    }

    @Test func timestampsSpreadOverTheDays() {
        let simulator = WorkloadSimulator(users: 500, seed: 5, days: 3)
        let start = WorkloadSimulator.defaultStart
        let firsts = Dictionary(grouping: simulator.map(\.record), by: \.user).values.compactMap { $0.map(\.ts).min() }
        #expect(firsts.allSatisfy { $0 >= start })
        // A journey starts in its slot; a user without a capability check starts with a presentation just after.
        #expect(firsts.filter { $0 < start + 3 * Timestamp.millisecondsPerDay }.count >= 490)
        #expect(firsts.contains { $0 >= start + 2 * Timestamp.millisecondsPerDay })
        #expect(WorkloadSimulator.defaultStart == Timestamp.parse("2026-11-01T00:00:00Z"))
    }

    @Test func everyLineHasTheRequiredFields() throws {
        for item in Self.sample {
            let line = item.line
            let record = item.record
            #expect(line.hasPrefix("{\"type\":\"\(record.type.rawValue)\",\"id\":\"\(record.id)\",\"ts\":\""))
            #expect(line.hasSuffix("}") && !line.contains("\n"))
            #expect(line.contains("\"user\":\"\(record.user)\""))
            #expect((1...128).contains(record.id.count))
            if case .review(let review) = record.body {
                #expect(record.id == "rv-\(review.conversion)-1" || record.id == "rv-\(review.conversion)-2")
            } else if case .erasure = record.body {
                #expect(record.id.hasPrefix("er-") && record.id.count <= Erasure.maximumIDLength)
            } else {
                #expect(record.id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) })
            }
            let ts = try #require(Self.member("ts", in: line))
            #expect(Timestamp.parse(ts) == record.ts)
            switch record.body {
            case .capabilities(let decision):
                let authorization =
                    line.contains("\"authorization\":\"authorized\"") || line.contains("\"authorization\":3")
                #expect(authorization == (decision != .unauthorized))
                if authorization {
                    #expect(line.contains("\"capabilities\":") != line.contains("\"subscription\":"))
                }
            case .presented(let offer, let loaded):
                #expect(line.contains("\"offer\":{\"action\":\"subscribe\""))
                #expect(line.contains("\"loaded\":false") == !loaded)
                if let token = offer.affiliateToken {
                    #expect(Token.isAffiliateToken(token))
                }
                if let campaign = offer.campaignToken {
                    #expect(Token.isCampaignToken(campaign))
                    #expect(line.contains(JSONStringLiteral.quote(campaign)))
                }
                #expect(!(line.contains("\"itemID\"") && line.contains("\"iTunesItemIdentifier\"")))
            case .erasure(let ticket):
                #expect(line.contains("\"ticket\":\(JSONStringLiteral.quote(ticket))"))
            case .review(let review):
                #expect(line.contains("\"conversion\":\"\(review.conversion)\""))
                #expect(line.contains("\"decision\":\"\(review.decision.rawValue)\""))
            case .outcome(let subscribed, _, let offerId):
                let forms = ["\"outcome\":", "\"capabilities\":", "\"subscription\":"].filter { line.contains($0) }
                #expect(forms.count == 1)
                if line.contains("\"outcome\":") {
                    #expect(line.contains(subscribed ? "\"outcome\":\"subscribed\"" : "\"outcome\":\"declined\""))
                }
                #expect(Self.member("offerId", in: line) == offerId)
            }
        }
    }

    @Test func theWorkloadCoversEveryForm() {
        let lines = Self.sample.map(\.line)
        let wanted = [
            "\"authorization\":\"authorized\"", "\"authorization\":3", "\"authorization\":\"notDetermined\"",
            "\"authorization\":\"denied\"", "\"authorization\":\"restricted\"", "\"authorization\":0",
            "\"authorization\":1", "\"authorization\":2", "\"capabilities\":[\"", "\"capabilities\":257",
            "\"capabilities\":2,", "\"subscription\":{", "\"loaded\":false", "\"loaded\":true",
            "\"campaignToken\":\"fall,promo\"", "\"campaignToken\":\"say \\\"hi\\\"\"", "\"itemID\":",
            "\"iTunesItemIdentifier\":", "\"outcome\":\"subscribed\"", "\"outcome\":\"declined\"", "\"offerId\":",
            "+01:00\"", "-05:00\"", "z\"", "\"appVersion\":", "\"placement\":",
        ]
        for fragment in wanted {
            #expect(lines.contains { $0.contains(fragment) }, "no line contains \(fragment)")
        }
        #expect(lines.contains { $0.contains("\"type\":\"offer.presented\"") && !$0.contains("messageIdentifier") })
        #expect(lines.contains { $0.contains("\"type\":\"offer.presented\"") && !$0.contains("affiliateToken") })
    }

    /// Under a 45-day holding period (the example rules) the workload has trials that end unpaid (lapsed),
    /// members who keep playback, and checks without playback only after the holding period.
    @Test func someTrialsEndUnpaidAndOthersQualify() {
        let settings = AttributionSettings(
            windowMs: AttributionSettings.defaults.windowMs, freshnessMs: AttributionSettings.defaults.freshnessMs,
            holdingMs: 1080 * 3_600_000)
        let byUser = Dictionary(grouping: Self.sample.filter { !$0.isDuplicate }.map(\.record), by: \.user)
        var lapsed = 0
        var held = 0
        var lapsedOnlyUnderALongerPeriod = 0
        for records in byUser.values {
            guard let conversion = Attribution.attribute(userRecords: records, settings: settings).conversion,
                conversion.status.isAttributed
            else { continue }
            if conversion.lapse != nil { lapsed += 1 } else { held += 1 }
            let longer = AttributionSettings(
                windowMs: settings.windowMs, freshnessMs: settings.freshnessMs,
                holdingMs: 200 * Timestamp.millisecondsPerDay)
            if conversion.lapse == nil,
                Attribution.attribute(userRecords: records, settings: longer).conversion?.lapse != nil
            {
                lapsedOnlyUnderALongerPeriod += 1
            }
        }
        #expect(lapsed > 20 && held > lapsed && lapsedOnlyUnderALongerPeriod > 5, "\(lapsed) \(held)")
    }

    @Test func someRecordsArriveLate() {
        let records = Self.sample.map(\.record)
        let late = zip(records, records.dropFirst()).filter { $1.ts < $0.ts - 3_600_000 }
        #expect(!late.isEmpty)
    }

    @Test func attributionSeesEveryOutcome() {
        let byUser = Dictionary(grouping: Self.sample.filter { !$0.isDuplicate }.map(\.record), by: \.user)
        var statuses: [String: Int] = [:]
        var repeats = 0
        for records in byUser.values {
            let subscribed = records.filter {
                if case .outcome(true, _, _) = $0.body { return true }
                return false
            }
            if subscribed.count > 1 { repeats += 1 }
            guard let conversion = Attribution.attribute(userRecords: records, settings: .defaults).conversion
            else { continue }
            switch conversion.status {
            case .attributed: statuses["attributed", default: 0] += 1
            case .unattributed(let reason): statuses[reason.rawValue, default: 0] += 1
            }
        }
        #expect(repeats > 0)
        for key in ["attributed", "no_presentation", "outside_window", "eligibility_unknown", "not_eligible"] {
            #expect(statuses[key, default: 0] > 0, "no conversion with status \(key)")
        }
    }
}

/// `simulate --returning`: users come back, so each user's records spread over the whole output.
@Suite struct ReturningUserSimulatorTests {
    static let sample = Array(ReturningUserSimulator(users: 3_000, seed: 9))

    @Test func deterministicValidAndInTimeOrder() {
        #expect(Array(ReturningUserSimulator(users: 3_000, seed: 9).lines) == Self.sample.map(\.line))
        #expect(Array(ReturningUserSimulator(users: 3_000, seed: 10).lines) != Self.sample.map(\.line))
        for simulated in Self.sample.prefix(2_000) {
            guard case .valid(let record) = RecordValidator.validate(Array(simulated.line.utf8)) else {
                Issue.record("invalid line \(simulated.line)")
                continue
            }
            #expect(record == simulated.record)
        }
        #expect(Set(Self.sample.map(\.record.id)).count == Self.sample.count)
        #expect(zip(Self.sample, Self.sample.dropFirst()).allSatisfy { RecordOrder.precedes($0.record, $1.record) })
    }

    @Test func usersReturnAcrossTheWholeRun() {
        var positions: [String: [Int]] = [:]
        for (index, simulated) in Self.sample.enumerated() {
            positions[simulated.record.user, default: []].append(index)
        }
        let perUser = Double(Self.sample.count) / Double(positions.count)
        #expect(positions.count == 3_000 && perUser > 5 && perUser < 7, "\(perUser) records a user")
        // Half the users' first and last records are more than a third of the output apart.
        let spans = positions.values.map { ($0.last ?? 0) - ($0.first ?? 0) }.sorted()
        #expect(spans[spans.count / 2] > Self.sample.count / 3)
        #expect(Self.sample.contains { if case .outcome(true, _, _) = $0.record.body { true } else { false } })
        #expect(Array(ReturningUserSimulator(users: 3_000, seed: 9, records: 100)).count == 100)
    }
}
