// Compiled together with Sources/OfferTrackDomain and Sources/WireFormat into one module by scripts/fuzz (no import
// needed).

/// libFuzzer entry for `LineFramer`: the first byte picks the line limit (1–64, or the real 65,536 from 0xf0 on:
/// `scripts/fuzz` runs with `-max_len=65600`), the second seeds the chunking of the rest. Feeding random chunks,
/// or stopping after random events and feeding the rest again (how the daemon reads), must give exactly the
/// events of one whole-input feed and of a reference model of SPEC section 2's framing.
@_cdecl("LLVMFuzzerTestOneInput")
public func framerFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let limit = input[0] >= 0xf0 ? 65536 : Int(input[0] % 64) + 1
    var seed = UInt64(input[1]) &+ 0x9E37_79B9_7F4A_7C15
    let bytes = Array(input[2...])

    var whole = LineFramer(maxLineBytes: limit)
    var wholeEvents: [LineFramer.Event] = []
    whole.append(bytes) { wholeEvents.append($0) }
    whole.finish { wholeEvents.append($0) }

    var chunked = LineFramer(maxLineBytes: limit)
    var chunkedEvents: [LineFramer.Event] = []
    var start = 0
    while start < bytes.count {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let length = Int(seed >> 33) % 17
        let end = min(bytes.count, start + length)
        chunked.append(Array(bytes[start..<end])) { chunkedEvents.append($0) }
        precondition(chunked.bufferedByteCount <= limit, "the framer holds more than the line limit")
        start = end
    }
    chunked.finish { chunkedEvents.append($0) }

    precondition(chunkedEvents == wholeEvents, "chunking changed the events")

    var stopping = LineFramer(maxLineBytes: limit)
    var resumedEvents: [LineFramer.Event] = []
    var offset = 0
    while offset < bytes.count {
        let consumed = bytes[offset...].withUnsafeBytes { rest in
            stopping.append(rest) { event -> Bool in
                resumedEvents.append(event)
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return seed >> 62 != 0  // stop after about a quarter of the events
            }
        }
        precondition(consumed > 0 && consumed <= bytes.count - offset, "append took \(consumed) bytes")
        offset += consumed
    }
    stopping.finish { resumedEvents.append($0) }
    precondition(resumedEvents == wholeEvents, "stopping and resuming changed the events")
    precondition(wholeEvents == referenceEvents(bytes, limit: limit), "events differ from the reference model")
    return 0
}

/// SPEC section 2's framing, written the obvious way: split at `\n`, refuse segments over the limit, drop one
/// trailing `\r`, skip empty lines; a final unterminated segment is a line too.
func referenceEvents(_ bytes: [UInt8], limit: Int) -> [LineFramer.Event] {
    var events: [LineFramer.Event] = []
    var segments = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    if bytes.last == UInt8(ascii: "\n") || bytes.isEmpty { segments.removeLast() }
    for segment in segments {
        if segment.count > limit {
            events.append(.tooLong)
            continue
        }
        var line = Array(segment)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if !line.isEmpty { events.append(.line(line)) }
    }
    return events
}
