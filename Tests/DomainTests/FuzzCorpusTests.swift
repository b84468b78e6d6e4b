import Foundation
import OfferTrackDomain
import Testing

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
                offset += bytes[offset...].withUnsafeBytes { rest in
                    stopping.append(rest) { event in
                        resumed.append(event)
                        return false
                    }
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

    @Test func validatorVerdictsAreStableAndContentEqualsItself() {
        let inputs = Self.inputs("validator")
        #expect(inputs.count >= 40)
        var valid = 0
        for line in inputs {
            let verdict = RecordValidator.validate(line)
            #expect(RecordValidator.validate(line) == verdict)
            if case .valid = verdict { valid += 1 }
            if let value = try? JSONParser.parse(line) { #expect(JSONContent.isSame(value, value)) }
        }
        #expect(valid >= 8, "the corpus should hold SPEC section 9's valid records")
    }

    @Test func rulesParsingIsDeterministic() {
        let inputs = Self.inputs("rules")
        #expect(inputs.count >= 20)
        var accepted = 0
        for bytes in inputs {
            let first = Result { () throws(RulesError) in try RulesFile(bytes: bytes) }
            let second = Result { () throws(RulesError) in try RulesFile(bytes: bytes) }
            #expect(first == second)
            if case .success = first { accepted += 1 }
        }
        #expect(accepted >= 3, "the SPEC's example rules must parse")
    }
}
