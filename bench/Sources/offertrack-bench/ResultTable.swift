/// One line of the results table.
struct ResultRow {
    let section: String
    let name: String
    let value: String
    /// A ratio to the baseline, a target verdict or a note.
    let comparison: String
}

/// One of the issue's targets and whether this run met it.
struct TargetVerdict {
    let name: String
    let goal: String
    let measured: String
    /// nil when the run did not measure it (smoke, or no `--big`).
    let met: Bool?

    var verdict: String {
        switch met {
        case true?: "met"
        case false?: "**missed**"
        case nil: "not measured"
        }
    }
}

/// Formatting of numbers for the table.
enum Format {
    /// `12,345` style integers.
    static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0 && index % 3 == 0 && character != "-" { out.append(",") }
            out.append(character)
        }
        return String(out.reversed())
    }

    /// A number with `places` decimals.
    static func fixed(_ value: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        let text = String(rounded)
        guard let dot = text.firstIndex(of: ".") else { return text }
        let decimals = text[text.index(after: dot)...].count
        if places == 0 { return String(text[..<dot]) }
        return text + String(repeating: "0", count: max(0, places - decimals))
    }

    /// `0.53×`.
    static func ratio(_ value: Double) -> String { fixed(value, 2) + "×" }
}

/// The markdown report: machine, table, targets.
struct Report {
    var machine: MachineDescription
    var mode: String
    var rows: [ResultRow] = []
    var targets: [TargetVerdict] = []
    var notes: [String] = []

    /// Orders the rows by section, keeping the measurement order within each.
    mutating func sortRowsBySection() {
        rows = rows.enumerated().sorted { ($0.element.section, $0.offset) < ($1.element.section, $1.offset) }
            .map(\.element)
    }

    var markdown: String {
        var lines = [
            "## offertrack benchmark (\(mode))", "",
            "- date: \(machine.date)",
            "- machine: \(machine.processors) CPUs (`nproc`), \(machine.cpuModel), Linux \(machine.kernel)",
            "- workload: \(notes.first ?? "")", "",
            "| section | measurement | result | vs baseline / target |",
            "|---|---|---|---|",
        ]
        for row in rows { lines.append("| \(row.section) | \(row.name) | \(row.value) | \(row.comparison) |") }
        lines += ["", "| target | goal | measured | verdict |", "|---|---|---|---|"]
        for target in targets {
            lines.append("| \(target.name) | \(target.goal) | \(target.measured) | \(target.verdict) |")
        }
        if notes.count > 1 {
            lines.append("")
            for note in notes.dropFirst() { lines.append("- \(note)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
