import OfferTrackDomain

extension HTMLReport {
    /// Three charts over the same days: presentations, conversions and qualified commission per day.
    func dailySeries() throws(MoneyOverflow) -> String {
        var out = "<section>\n<h2>Per day</h2>\n"
        guard !daily.isEmpty else { return out + "<p>No days in this range.</p>\n</section>\n" }
        let days = Self.everyDay(daily)
        let series: [(name: String, values: [Int64], format: (Int64) -> String)] = [
            ("Presentations", days.map { Int64($0.presented) }, { String($0) }),
            ("Conversions", days.map { Int64($0.conversions) }, { String($0) }),
            ("Qualified commission (\(currency))", days.map(\.commissionMinor), { Self.money($0, currency) }),
        ]
        let axis = DayAxis(days: days.map { $0.key ?? "" })
        // One left margin for the three, wide enough for the widest scale, so that their days line up.
        let left = series.map { DayAxis.left(forLabel: $0.format(Self.largest($0.values))) }.max() ?? 0
        for (name, values, format) in series {
            out += try chart(name: name, values: values, axis: axis, left: left, format: format)
        }
        return out + "</section>\n"
    }

    /// The by-day rows with the days between them that have none filled in as empty rows, so the charts keep
    /// time to scale: from the first day with data to the last, not past it.
    static func everyDay(_ rows: [ReportRow]) -> [ReportRow] {
        guard let first = rows.first?.key.flatMap(Timestamp.parseDay),
            let last = rows.last?.key.flatMap(Timestamp.parseDay), last >= first
        else { return rows }
        var byDay: [String: ReportRow] = [:]
        for row in rows { if let key = row.key { byDay[key] = row } }
        var filled: [ReportRow] = []
        var start = first
        while start <= last {
            let key = Timestamp.formatDay(start)
            filled.append(byDay[key] ?? ReportRow(key: key))
            start += Timestamp.millisecondsPerDay
        }
        return filled
    }

    /// The top of a chart's scale: its largest value, at least 1.
    private static func largest(_ values: [Int64]) -> Int64 { max(1, values.max() ?? 1) }

    private func chart(
        name: String, values: [Int64], axis: DayAxis, left: Int, format: (Int64) -> String
    ) throws(MoneyOverflow) -> String {
        let largest = Self.largest(values)
        let total = try Money.total(values)
        let top = format(largest)
        let base = DayAxis.plotHeight + 8
        let width = left + axis.end + 8
        let height = base + 24
        var out = "<figure>\n<figcaption>\(Self.escape(name)) per day: total \(format(total)), "
        out += "largest day \(top)</figcaption>\n"
        out += "<svg class=\"daily\" role=\"img\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" "
        out += "height=\"\(height)\" data-first-day=\"\(axis.first)\" data-last-day=\"\(axis.last)\">"
        out += "<title>\(Self.escape(name)) per day from \(axis.first) to \(axis.last)</title>\n"
        out += "<g transform=\"translate(\(left) 0)\">"
        out += "<line x1=\"0\" y1=\"\(base)\" x2=\"\(axis.end)\" y2=\"\(base)\" class=\"axis\"/>"
        out += "<text x=\"-4\" y=\"12\" class=\"scale\" text-anchor=\"end\">\(top)</text>"
        out += "<text x=\"-4\" y=\"\(base)\" class=\"scale\" text-anchor=\"end\">0</text>\n"
        for (index, value) in values.enumerated() {
            // Geometry in floating point: a bar's height is a picture of the amount, not money.
            let height = Int((Double(max(0, value)) / Double(largest) * Double(DayAxis.plotHeight)).rounded())
            out += "<rect x=\"\(axis.x(index))\" y=\"\(base - height)\" width=\"\(axis.barWidth)\" "
            out += "height=\"\(height)\" class=\"day\" data-day=\"\(axis.days[index])\">"
            out += "<title>\(axis.days[index]): \(format(value))</title></rect>\n"
        }
        for tick in axis.ticks {
            out += "<line x1=\"\(tick.mark)\" y1=\"\(base)\" x2=\"\(tick.mark)\" y2=\"\(base + 4)\" "
            out += "class=\"tickmark\"/>"
            out += "<text x=\"\(tick.x)\" y=\"\(base + 17)\" class=\"tick\" text-anchor=\"\(tick.anchor)\" "
            out += "data-day=\"\(axis.days[tick.index])\">\(axis.days[tick.index].suffix(5))</text>\n"
        }
        return out + "</g></svg>\n</figure>\n"
    }
}

/// Where the daily charts put their days (SVG units, from the plot's left edge): one slot per day from the first
/// day with data to the last, the axis ending at the last day's bar and labelled with that day.
struct DayAxis {
    /// One labelled day: its index, where its mark is, and where and how its label is anchored.
    struct Tick: Equatable {
        let index: Int
        let mark: Int
        let x: Int
        let anchor: String
    }

    static let plotHeight = 100
    /// The width the days share, each at least 3 and at most 40 units.
    static let plotWidth = 1080
    /// The least distance between two labels' anchors (a `MM-DD` label is about 35 units wide).
    static let labelSpacing = 60

    /// `YYYY-MM-DD`, consecutive.
    let days: [String]
    /// The width of one day's slot.
    let step: Int

    init(days: [String]) {
        self.days = days
        step = max(3, min(40, Self.plotWidth / max(1, days.count)))
    }

    var first: String { days.first ?? "" }
    var last: String { days.last ?? "" }
    var barWidth: Int { max(2, step - max(1, step / 5)) }
    func x(_ index: Int) -> Int { index * step }
    /// The right edge of the last day's bar: the axis ends there.
    var end: Int { x(max(0, days.count - 1)) + barWidth }

    /// The room left of the plot for the scale's widest label.
    static func left(forLabel label: String) -> Int { 12 + 7 * label.count }

    /// The first day, every `interval`-th day after it (weeks once days get narrow), and the last day; a day too
    /// close to the last is left unlabelled. The first label starts at its bar, the last ends at the axis' end,
    /// the others are centred on their day.
    var ticks: [Tick] {
        guard !days.isEmpty else { return [] }
        let lastIndex = days.count - 1
        let interval = [1, 2, 7, 14, 28, 56, 91, 182, 364].first { $0 * step >= Self.labelSpacing } ?? 728
        var ticks: [Tick] = []
        for index in stride(from: 0, to: lastIndex, by: interval) {
            guard (lastIndex - index) * step >= Self.labelSpacing else { break }
            let centre = x(index) + barWidth / 2
            ticks.append(
                index == 0
                    ? Tick(index: 0, mark: centre, x: 0, anchor: "start")
                    : Tick(index: index, mark: centre, x: centre, anchor: "middle"))
        }
        ticks.append(Tick(index: lastIndex, mark: x(lastIndex) + barWidth / 2, x: end, anchor: "end"))
        return ticks
    }
}
