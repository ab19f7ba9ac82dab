import KilnModel

/// One parameter of a foreign URL scheme, declared once beside its adapter: its names, the Kiln
/// options it becomes (names of `OptionCatalog` declarations), and, for parameters Kiln knows
/// but refuses, the reason. The adapter's set of accepted names and its refusals derive from
/// the table; `AdapterDeclarationTests` checks that every option named here is declared, that
/// every translation an adapter writes uses only the options of the parameters present, and that
/// docs/integrations.md's table for the adapter lists every parameter.
public struct AdapterParameter: Sendable {
    /// The name the foreign URL uses (`width`).
    public let name: String
    /// Other names for it (`w`).
    public let aliases: [String]
    /// The Kiln options it writes (`resize`, `enlarge`); empty: it changes nothing (`ixlib`).
    public let options: [String]
    /// Why Kiln refuses the parameter (a 400 with this reason); nil when it is translated.
    public let refusal: String?

    public init(_ name: String, aliases: [String] = [], options: [String] = [], refused refusal: String? = nil) {
        self.name = name
        self.aliases = aliases
        self.options = options
        self.refusal = refusal
    }

    /// The name and the aliases.
    public var names: [String] { [name] + aliases }
}

extension Array where Element == AdapterParameter {
    /// The names (and aliases) of the translated parameters.
    var accepted: Set<String> {
        Set(filter { $0.refusal == nil }.flatMap(\.names))
    }

    /// The alias-to-name table.
    var aliasTable: [String: String] {
        var table: [String: String] = [:]
        for p in self { for a in p.aliases { table[a] = p.name } }
        return table
    }

    /// The refused parameters, each name with its reason.
    var refusals: [String: String] {
        var table: [String: String] = [:]
        for p in self { if let r = p.refusal { for n in p.names { table[n] = r } } }
        return table
    }
}

extension Array where Element == AdapterParameter {
    /// The migration table of docs/migrate-<server>.md: each foreign parameter (and its other
    /// names), then the Kiln options it writes (with their short names), or why it is refused.
    public func markdownTable(foreign: String) -> String {
        var rows = ["| \(foreign) | Kiln |", "| --- | --- |"]
        for p in self {
            let names = p.names.map { "`\($0)`" }.joined(separator: ", ")
            let kiln: String
            if let refusal = p.refusal {
                kiln = "refused (400): \(refusal)"
            } else if p.options.isEmpty {
                kiln = "ignored: changes nothing in the image"
            } else {
                kiln = p.options.map { option in
                    let short = OptionCatalog.declaration(named: option)?.aliases.first.map { " (`\($0):`)" } ?? ""
                    return "`\(option)`" + short
                }.joined(separator: ", ")
            }
            rows.append("| \(names) | \(kiln) |")
        }
        return rows.joined(separator: "\n")
    }
}
