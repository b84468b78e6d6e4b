import JSON
import OfferTrackDomain
import Testing

@testable import WireFormat

/// The fused path (the line scanned once into the validator's fields) against the tree path (the whole line parsed,
/// then validated): the same verdict for every line, valid or refused, whatever the error and its byte offset.
@Suite struct FusedValidationTests {
    /// The verdict of the tree path, the reference: `JSONParser.parse`, then the validator on the value.
    static func treeVerdict(_ line: [UInt8]) -> LineVerdict {
        do {
            return RecordValidator.validate(try JSONParser.parse(line))
        } catch {
            return .rejected(id: nil, error)
        }
    }

    /// Expects both paths to answer `line` alike.
    static func expectSame(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let fused = RecordValidator.validate(line)
        let tree = treeVerdict(line)
        #expect(
            fused == tree, "\(String(decoding: line, as: UTF8.self).debugDescription)",
            sourceLocation: sourceLocation)
    }

    @Test(arguments: FusedValidationCases.lines)
    func tableLine(_ line: String) {
        Self.expectSame(Array(line.utf8))
    }

    @Test(arguments: FusedValidationCases.byteLines)
    func tableBytes(_ line: [UInt8]) {
        Self.expectSame(line)
    }

    /// The table covers what it should: valid records of every type and refusals of every kind.
    @Test func tableCoversEveryOutcome() {
        let verdicts = (FusedValidationCases.lines.map { Array($0.utf8) } + FusedValidationCases.byteLines)
            .map(Self.treeVerdict)
        var types = Set<String>()
        var codes = Set<String>()
        for verdict in verdicts {
            switch verdict {
            case .valid(let record): types.insert(record.type.rawValue)
            case .rejected(_, let error): codes.insert("\(error.code)")
            }
        }
        #expect(types.count == 5, "\(types)")
        #expect(codes.count >= 4, "\(codes)")
    }

    /// Seeded mutations of the table's lines: bytes changed, inserted and removed, members repeated, swapped, set to
    /// null, names escaped, unknown members added (with nested repeats and deep nesting).
    @Test func mutatedLines() {
        var random = SplitMix64(seed: 0x0FF3_27AC)
        let seeds = FusedValidationCases.lines.map { Array($0.utf8) } + FusedValidationCases.byteLines
        var valid = 0
        var checked = 0
        for round in 0..<60_000 {
            // Half the rounds start from a valid line, so that enough mutants stay valid.
            let valids = FusedValidationCases.valid
            var line =
                random.below(2) == 0 ? Array(valids[random.below(valids.count)].utf8) : seeds[random.below(seeds.count)]
            for _ in 0...random.below(3) { line = LineMutator.mutate(line, &random) }
            let fused = RecordValidator.validate(line)
            let tree = Self.treeVerdict(line)
            if fused != tree {
                Issue.record("round \(round): \(String(decoding: line, as: UTF8.self).debugDescription)")
                return
            }
            if case .valid = fused { valid += 1 }
            checked += 1
        }
        #expect(checked == 60_000)
        // Enough of the mutants stay valid for the valid path to be compared too.
        #expect(valid > 3_000, "\(valid) valid")
    }
}

/// A small seeded generator (SplitMix64), so that a failing round can be replayed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
