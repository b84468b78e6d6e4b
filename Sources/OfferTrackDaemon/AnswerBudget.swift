/// Answer bytes produced but not yet written, over every connection: answers to rejected lines are made at
/// once, so a peer that never reads would otherwise pile them up without bound (one ~130-byte answer per
/// 2-byte line). Connections whose answers wait stop being read while the total is over `limit`.
final class AnswerBudget {
    let limit: Int
    private(set) var bytes = 0

    init(limit: Int) { self.limit = limit }

    var isExceeded: Bool { bytes >= limit }

    func add(_ count: Int) { bytes += count }
    func release(_ count: Int) { bytes -= count }
}
