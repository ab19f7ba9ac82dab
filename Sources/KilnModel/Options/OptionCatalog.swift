/// Every built-in URL option, each declared once (`OptionDeclaration`), and the tables derived
/// from the declarations: lookup by name or alias, the names the option policy speaks, the docs'
/// Markdown tables and the fuzz dictionary's tokens.
///
/// Adding an option: one declaration in the group file it belongs to (`OptionCatalog+Size`,
/// `+Output`, `+Request`, `+Geometry`, `+Filters`); a new processing step also needs its
/// `Operation` case (whose `switch`es, `RequestCost` among them, the compiler then lists) and
/// its processor. docs/development.md walks through one.
public enum OptionCatalog {
    /// Every declaration, in the order of the docs' tables.
    public static let all: [OptionDeclaration] = size + output + request + geometry + filters

    /// Each name and alias to its declaration.
    static let byName: [String: OptionDeclaration] = {
        var table: [String: OptionDeclaration] = [:]
        for option in all {
            for n in option.names {
                precondition(table[n] == nil, "option name \(n) declared twice")
                table[n] = option
            }
        }
        return table
    }()

    /// The declaration `name` (a long name or an alias) refers to.
    public static func declaration(named name: String) -> OptionDeclaration? {
        byName[name]
    }

    /// The declaration of an operation's step (`resize` for every `Operation.resize`); nil for
    /// custom processors.
    public static func declaration(of operation: Operation) -> OptionDeclaration? {
        byName[operation.optionName]
    }

    /// One docs/url-api.md table, generated from the declarations: the text between the
    /// `<!-- generated: options … -->` markers of that file (`OptionCatalogTests` compares them and
    /// rewrites them with `KILN_DOCS_UPDATE=1`).
    public static func markdownTable(_ table: OptionDeclaration.Table) -> String {
        var rows: [String]
        switch table {
        case .options: rows = ["| option | alias | meaning | example |", "| --- | --- | --- | --- |"]
        case .processors: rows = ["| processor | alias | effect | example |", "| --- | --- | --- | --- |"]
        }
        for option in all where option.table == table {
            let aliases = option.aliases.map { "`\($0)`" }.joined(separator: ", ")
            for usage in option.usages {
                let examples = usage.examples.map { "`\($0)`" }.joined(separator: ", ")
                rows.append("| `\(usage.grammar)` |" + (aliases.isEmpty ? "" : " " + aliases) + " | \(usage.summary) | \(examples) |")
            }
        }
        switch table {
        case .options: rows.append("| `-` | | end of options | `/w:64/-/w:50/cat.jpg` (file `w:50/cat.jpg`) |")
        case .processors:
            rows.append("| `posterize:<2-32>` | | an example custom processor (see below): that many levels per channel | `/posterize:4/cat.jpg` |")
        }
        return rows.joined(separator: "\n")
    }

    /// Tokens for the spec parser's fuzz dictionary (`Fuzz/Dictionaries/FuzzSpecParser.dict`):
    /// every name and alias and each declaration's own tokens.
    public static var fuzzTokens: [String] {
        var seen = Set<String>()
        return all.flatMap { $0.names + $0.fuzzTokens }.filter { seen.insert($0).inserted }
    }
}

extension Operation {
    /// The long name of the option that writes this step (`OptionDeclaration.name`); a custom
    /// processor's own name.
    public var optionName: String {
        switch self {
        case .trim: "trim"
        case .resize: "resize"
        case .crop(let c): c.edges == nil ? "crop" : "cut"
        case .pad: "pad"
        case .extend: "extend"
        case .circle: "circle"
        case .rounded: "rounded"
        case .blur: "blur"
        case .sharpen: "sharpen"
        case .grayscale: "grayscale"
        case .sepia: "sepia"
        case .tint: "tint"
        case .brightness: "brightness"
        case .contrast: "contrast"
        case .saturation: "saturation"
        case .rotate: "rotate"
        case .flip: "flip"
        case .custom(let c): c.name
        case .watermark: "watermark"
        }
    }
}
