import OfferTrackDomain

extension HTMLReport {
    /// The funnel per group as small multiples: a grid of small bar charts on one scale (the largest count of any
    /// group), presented → eligible → conversions → attributed → qualified, with lapsed, voided, held and pending.
    func funnels() -> String {
        var out = "<section>\n<h2>Funnel per \(grouping.rawValue)</h2>\n"
        guard !rows.isEmpty else { return out + "<p>No presentations or conversions in this range.</p>\n</section>\n" }
        let largest = max(1, rows.map { Self.stages($0).map(\.count).max() ?? 0 }.max() ?? 1)
        out += "<p class=\"note\">Every chart on the same scale: a bar as long as another counts as many.</p>\n"
        out += "<div class=\"funnels\">\n"
        for row in rows { out += smallFunnel(row, largest: largest) }
        return out + "</div>\n</section>\n"
    }

    private static func stages(_ row: ReportRow) -> [(name: String, count: Int)] {
        [
            ("presented", row.presented), ("eligible", row.presentedEligible), ("conversions", row.conversions),
            ("attributed", row.attributed), ("qualified", row.qualified), ("lapsed", row.lapsed),
            ("voided", row.voided), ("held", row.held), ("pending", row.pending),
        ]
    }

    private func smallFunnel(_ row: ReportRow, largest: Int) -> String {
        let stages = Self.stages(row)
        let name = label(row.key)
        let barHeight = 10
        let height = stages.count * (barHeight + 3) + 2
        let title = "Funnel for \(name): " + stages.map { "\($0.name) \($0.count)" }.joined(separator: ", ")
        var out = "<figure>\n<figcaption>\(Self.escape(name)): \(Self.money(row.commissionMinor, currency)) qualified, "
        out += "\(Self.money(row.pendingCommissionMinor, currency)) pending, "
        out += "\(Self.money(row.heldCommissionMinor, currency)) held (\(Self.escape(currency)))</figcaption>\n"
        out += "<svg role=\"img\" viewBox=\"0 0 300 \(height)\" width=\"300\" height=\"\(height)\">"
        out += "<title>\(Self.escape(title))</title>\n"
        for (index, stage) in stages.enumerated() {
            let y = 1 + index * (barHeight + 3)
            let width = Int((Double(stage.count) / Double(largest) * 180).rounded())
            out += "<text x=\"0\" y=\"\(y + 9)\" class=\"label\">\(stage.name)</text>"
            out += "<rect x=\"78\" y=\"\(y)\" width=\"\(width)\" height=\"\(barHeight)\" class=\"bar \(stage.name)\"/>"
            out += "<text x=\"\(82 + width)\" y=\"\(y + 9)\" class=\"value\">\(stage.count)</text>\n"
        }
        return out + "</svg>\n</figure>\n"
    }
}
