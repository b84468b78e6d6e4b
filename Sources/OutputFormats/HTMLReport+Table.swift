import OfferTrackDomain

extension HTMLReport {
    private static let columns: [(field: String, title: String)] = [
        ("presented", "Presented"), ("presentedEligible", "Eligible"), ("conversions", "Conversions"),
        ("attributed", "Attributed"), ("lapsed", "Lapsed"), ("voided", "Voided"), ("held", "Held"),
        ("pending", "Pending"),
    ]

    /// The rows as `--format json` has them (money in the currency's units; the minor units in `data-minor`),
    /// and a totals line.
    func table() throws(MoneyOverflow) -> String {
        var out = "<section>\n<h2>Table</h2>\n<table>\n<caption>The report by \(grouping.rawValue), as of "
        out += "\(Timestamp.format(asOf)); amounts in \(Self.escape(currency))</caption>\n<thead><tr>"
        out += "<th scope=\"col\">\(grouping.rawValue.prefix(1).uppercased() + grouping.rawValue.dropFirst())</th>"
        for column in Self.columns { out += "<th scope=\"col\">\(column.title)</th>" }
        out += "<th scope=\"col\">Commission</th><th scope=\"col\">Pending commission</th>"
        out += "<th scope=\"col\">Held commission</th></tr></thead>\n<tbody>\n"
        for row in rows {
            out += tableRow(row, header: label(row.key), key: row.key.map(Self.escape) ?? "")
        }
        out += "</tbody>\n<tfoot>\n"
        let total = try ReportRow.total(of: rows, key: nil)
        out += tableRow(total, header: "Total", key: "", isTotal: true)
        return out + "</tfoot>\n</table>\n</section>\n"
    }

    private func tableRow(_ row: ReportRow, header: String, key: String, isTotal: Bool = false) -> String {
        let counts: [String: Int] = [
            "presented": row.presented, "presentedEligible": row.presentedEligible, "conversions": row.conversions,
            "attributed": row.attributed, "lapsed": row.lapsed, "voided": row.voided, "held": row.held,
            "pending": row.pending,
        ]
        let keyAttribute = isTotal ? "" : row.key == nil ? " data-key-null" : " data-key=\"\(key)\""
        var out =
            "<tr class=\"\(isTotal ? "total" : "group")\"\(keyAttribute)><th scope=\"row\">\(Self.escape(header))</th>"
        for column in Self.columns { out += "<td data-field=\"\(column.field)\">\(counts[column.field] ?? 0)</td>" }
        for (field, amount) in [
            ("commissionMinor", row.commissionMinor), ("pendingCommissionMinor", row.pendingCommissionMinor),
            ("heldCommissionMinor", row.heldCommissionMinor),
        ] {
            out += "<td data-field=\"\(field)\" data-minor=\"\(amount)\">\(Self.money(amount, currency))</td>"
        }
        return out + "</tr>\n"
    }
}
