import Foundation

/// The numbers of `report --format html`'s table, read from the page's DOM.
enum ReportTable {
    /// The `data-field` cells of each group row of the page's table, keyed by `data-key` ("" for the null group).
    static func values(_ dom: String) -> [String: [String: Int64]] {
        var rows: [String: [String: Int64]] = [:]
        for chunk in dom.components(separatedBy: "<tr class=\"group\"").dropFirst() {
            let row = chunk.components(separatedBy: "</tr>")[0]
            let head = row.prefix { $0 != ">" }
            var key = ""
            if let range = head.range(of: "data-key=\"") {
                key = String(head[range.upperBound...].prefix { $0 != "\"" })
            }
            var fields: [String: Int64] = [:]
            for cell in row.components(separatedBy: "<td data-field=\"").dropFirst() {
                let name = String(cell.prefix { $0 != "\"" })
                let value: Substring
                if let minor = cell.range(of: "data-minor=\"") {
                    value = cell[minor.upperBound...].prefix { $0 != "\"" }
                } else {
                    value = cell.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" }
                }
                fields[name] = Int64(value)
            }
            rows[key] = fields
        }
        return rows
    }
}
