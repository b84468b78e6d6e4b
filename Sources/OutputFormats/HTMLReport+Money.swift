import OfferTrackDomain

extension HTMLReport {
    /// The latest payout month ended by the report's `asOf` (SPEC 7.1), as the journals hold it.
    public enum Payouts: Sendable, Equatable {
        /// No month that ended by then is published.
        case unpublished
        case published(PublishedPayouts)
        /// The journals read together hold different latest months (a fleet's publication stopped part way).
        case journalsDisagree
    }

    /// The money first, as tiles: the commission qualified, pending and held at `asOf` (the table's totals), then
    /// the latest published payout month's payable and carried totals, one tile per currency.
    func money() throws(MoneyOverflow) -> String {
        let total = try ReportRow.total(of: rows, key: nil)
        var out = "<section class=\"money\">\n<h2>Money at \(Timestamp.format(asOf))</h2>\n<dl class=\"tiles\">\n"
        out += Self.tile(
            "qualified", "Qualified commission", total.commissionMinor, currency,
            how: "attributed conversions past their holding period, neither voided nor held")
        out += Self.tile(
            "pending", "Pending commission", total.pendingCommissionMinor, currency,
            how: "attributed conversions still in their holding period")
        out += Self.tile(
            "held", "Held commission", total.heldCommissionMinor, currency,
            how: "what held conversions earn once released")
        out += "</dl>\n" + payoutTiles() + "</section>\n"
        return out
    }

    private func payoutTiles() -> String {
        switch payouts {
        case .unpublished:
            return "<p class=\"note\">No payout month that ended by \(Timestamp.format(asOf)) is published.</p>\n"
        case .journalsDisagree:
            return "<p class=\"note\">The journals hold different latest payout months: publish the month again "
                + "(<code>offertrack payouts</code>) to complete it in every journal. No payout totals shown.</p>\n"
        case .published(let month):
            var out = "<h3>Payout statement \(Self.escape(month.month))</h3>\n"
            out += "<p class=\"facts\">Published \(Self.escape(month.generatedAt)); the month's totals from its "
            out += "manifest, whatever the range above.</p>\n<dl class=\"tiles\">\n"
            // A statement without lines pays and carries nothing: zero in the rules' currency.
            let totals = month.totals.map { ($0.currency, $0.payableMinor, $0.carriedMinor) }
            for (currency, payable, _) in totals.isEmpty ? [(currency, 0, 0)] : totals {
                out += Self.tile("payable", "Payable", payable, currency, how: "due to affiliates for \(month.month)")
            }
            for (currency, _, carried) in totals.isEmpty ? [(currency, 0, 0)] : totals {
                out += Self.tile(
                    "carried", "Carried", carried, currency, how: "balances below the minimum or negative, carried on")
            }
            return out + "</dl>\n"
        }
    }

    /// One figure: what it is, its amount (`84.00 USD`) and what it counts; `data-money` names it for tests and
    /// tools, `data-minor` holds the integer minor units.
    private static func tile(_ name: String, _ title: String, _ minor: Int64, _ currency: String, how: String)
        -> String
    {
        "<div class=\"tile \(name)\" data-money=\"\(name)\" data-minor=\"\(minor)\" data-currency=\"\(escape(currency))\">"
            + "<dt>\(title)</dt><dd class=\"amount\">\(amount(minor, currency))</dd>"
            + "<dd class=\"how\">\(escape(how))</dd></div>\n"
    }
}
