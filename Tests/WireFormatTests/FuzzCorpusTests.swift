import Foundation
import JSON
import OfferTrackDomain
import Testing
import WireFormat

/// Replays the fuzzers' checked-in seed corpora (fuzz/corpus/) through their main invariants, so the seeds guard
/// every `swift test` run. A crasher a fuzzer finds goes into its corpus folder and gets a named test below.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../fuzz/corpus").standardized.path

    static func inputs(_ target: String) -> [[UInt8]] {
        let folder = "\(corpus)/\(target)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.sorted().compactMap { FileManager.default.contents(atPath: "\(folder)/\($0)").map { Array($0) } }
    }

    @Test func framerGivesTheSameEventsWhateverTheChunking() {
        let inputs = Self.inputs("framer")
        #expect(inputs.count >= 12)
        for input in inputs where input.count >= 2 {
            let limit = input[0] >= 0xf0 ? 65536 : Int(input[0] % 64) + 1
            let bytes = Array(input[2...])
            var whole = LineFramer(maxLineBytes: limit)
            var expected: [LineFramer.Event] = []
            whole.append(bytes) { expected.append($0) }
            whole.finish { expected.append($0) }
            // Stopping after every event and feeding the rest again (how the daemon reads) changes nothing.
            var stopping = LineFramer(maxLineBytes: limit)
            var resumed: [LineFramer.Event] = []
            var offset = 0
            while offset < bytes.count {
                offset += stopping.append(bytes[offset...]) { event in
                    resumed.append(event)
                    return false
                }
            }
            stopping.finish { resumed.append($0) }
            #expect(resumed == expected, "stopping after each event")
            for chunkSize in (limit > 64 ? [4093] : Array(1...7)) {
                var chunked = LineFramer(maxLineBytes: limit)
                var events: [LineFramer.Event] = []
                for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                    chunked.append(Array(bytes[start..<min(bytes.count, start + chunkSize)])) { events.append($0) }
                }
                chunked.finish { events.append($0) }
                #expect(events == expected, "chunks of \(chunkSize)")
            }
        }
    }

    /// The same line with insignificant JSON whitespace around it: a valid record stays the same record, a
    /// refused one keeps its code, field and id; equal content is decided equal, and a changed value not.
    @Test func validatorVerdictsIgnoreInsignificantWhitespaceAndContentTellsValuesApart() {
        let inputs = Self.inputs("validator")
        #expect(inputs.count >= 40)
        var valid = 0
        let space = Array(" \t ".utf8)
        for line in inputs {
            let verdict = RecordValidator.validate(line)
            let spaced = RecordValidator.validate(space + line + space)
            switch (verdict, spaced) {
            case (.valid(let record), .valid(let again)):
                #expect(record == again)
                valid += 1
            case (.rejected(let id, let error), .rejected(let againID, let again)):
                #expect(id == againID && error.code == again.code && error.field == again.field, "\(error) / \(again)")
            default:
                Issue.record("whitespace changed the verdict: \(verdict) / \(spaced)")
            }
            guard case .object(var object)? = try? JSONParser.parse(line) else { continue }
            let spacedValue = try? JSONParser.parse(space + line + space)
            #expect(spacedValue.map { JSONContent.isSame(.object(object), $0) } ?? false)
            if let first = object.members.first {
                let original = JSONValue.object(object)
                object.members[0] = (first.key, .string("a value no corpus line holds \u{1F600}"))
                #expect(!JSONContent.isSame(original, .object(object)), "a changed member compared equal")
            }
        }
        #expect(valid >= 8, "the corpus should hold SPEC section 9's valid records")
    }

    /// Insignificant whitespace around a rules file changes its SHA-256 (which the manifest records) but not
    /// the rules, nor whether it is refused.
    @Test func rulesParsingIgnoresInsignificantWhitespace() {
        let inputs = Self.inputs("rules")
        #expect(inputs.count >= 20)
        var accepted = 0
        for bytes in inputs {
            let first = Result { () throws(RulesError) in try RulesFile(bytes: bytes) }
            let second = Result { () throws(RulesError) in try RulesFile(bytes: Array("\n  ".utf8) + bytes + [0x0a]) }
            switch (first, second) {
            case (.success(let file), .success(let again)):
                #expect(file.rules == again.rules)
                #expect(file.sha256 != again.sha256)
                accepted += 1
            case (.failure, .failure): break
            default: Issue.record("whitespace changed whether the rules parse: \(first) / \(second)")
            }
        }
        #expect(accepted >= 3, "the SPEC's example rules must parse")
    }
}
