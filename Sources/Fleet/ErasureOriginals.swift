import JSON
import Synchronization
import WireFormat

/// An edge's erasures as they were sent, naming the person (SPEC sections 10 and 11), kept in memory only until
/// the stream holds them.
///
/// An edge journals an erasure renamed like every record of its person, so its journal no longer names the
/// person; but the central journal that holds the person's other records can apply the erasure only if the
/// stream message names them. So the daemon notes each erasure's line before its commit (`note`), and the
/// forwarder sends that line in place of the journaled one (`original(of:)`, only when renaming it gives exactly
/// the journaled line), then forgets it once the stream acknowledged it. Nothing of it reaches a file: an edge
/// that restarts before forwarding an erasure forwards it renamed, and says so in its log.
public final class ErasureOriginals: Sendable {
    private let lines = Mutex<[String: [UInt8]]>([:])
    /// The erasures kept at most (a stream down for long with many erasures): past it, the newest are not kept.
    public static let capacity = 10_000

    public init() {}

    /// Keeps the line of each erasure of a batch by its record id, before the batch's commit; returns the ids
    /// it did not hold before (to forget if the batch does not journal them: an id already held belongs to an
    /// erasure journaled earlier and still on its way, which a repeat must not take away). Past `capacity`, new
    /// ones are not kept.
    @discardableResult
    public func note(erasureLines: [(id: String, line: [UInt8])]) -> Set<String> {
        guard !erasureLines.isEmpty else { return [] }
        return lines.withLock { lines in
            var added: Set<String> = []
            for (id, line) in erasureLines where lines[id] == nil && lines.count < Self.capacity {
                lines[id] = line
                added.insert(id)
            }
            return added
        }
    }

    /// Forgets the erasures with `ids` (not journaled by their batch, or acknowledged by the stream).
    public func forget(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        lines.withLock { lines in for id in ids { lines[id] = nil } }
    }

    /// The erasure `id`'s line as sent, when it renamed to `journaledUser` is exactly `journaledLine`.
    func original(of id: String, journaledUser: String, journaledLine: [UInt8]) -> [UInt8]? {
        guard let line = lines.withLock({ $0[id] }) else { return nil }
        return UserMemberRewrite.renaming(line, to: journaledUser) == journaledLine ? line : nil
    }

    /// How many erasures are kept now.
    public var count: Int { lines.withLock { $0.count } }
}
