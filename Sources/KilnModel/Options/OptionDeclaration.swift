/// One URL option, described once (issue 35): its names, its grammar and what it does, what it
/// costs, whether it runs on every frame, who may use it, what it can reveal, which request
/// headers it makes an answer vary on, its documentation and its fuzz tokens.
///
/// `OptionCatalog.all` holds every declaration. What used to be spelled again in each place that
/// meets an option is derived from it: the parser (`apply`, reached by name or alias), the
/// option policy's names (`OptionPolicy`), the cost planner's weights (`work`), the tables of
/// docs/url-api.md (`OptionCatalog.markdownTable`), the fuzz dictionary and the adapters' native
/// spellings are checked against it by tests (`OptionCatalogTests`).
public struct OptionDeclaration: Sendable {
    /// One way of writing the option: a row of the URL tables in docs/url-api.md.
    public struct Usage: Sendable {
        /// `resize:<w>:<h>[:<mode>]`.
        public let grammar: String
        /// What it does, one table cell (Markdown).
        public let summary: String
        /// Example URLs (`/rs:300:200:fill/cat.jpg`).
        public let examples: [String]

        public init(_ grammar: String, _ summary: String, _ examples: [String]) {
            self.grammar = grammar
            self.summary = summary
            self.examples = examples
        }
    }

    /// How the option enters the variant's identity (`ImageRequest.canonical`, the cache key).
    public enum Identity: Sendable, Equatable {
        /// Spelled in the canonical request.
        case canonical
        /// Resolved into other options before the key is made (`dpr:` multiplies sizes, `pr:`
        /// expands, `ch:` becomes the device's answer): the resolution is in the key.
        case resolved
        /// Changes headers only (`fn:`, `att:`): not in the key, the answer's bytes are the same.
        case headers
        /// Only restricts who is answered (`exp:`): not in the key.
        case restriction
    }

    /// Who may write the option in a URL.
    public enum Access: Sendable, Equatable {
        /// The deployment's option policy applies (`security.presets_only`,
        /// `security.allowed_operations`); nginx's trusted rewrites and presets skip it.
        case policy
        /// Always accepted: the option only restricts the answer (`exp:`).
        case always
    }

    /// What the option can reveal of the source beyond its pixels.
    public enum Privacy: Sendable, Equatable {
        case none
        /// Keeps the source's metadata in the output (EXIF, XMP: camera, dates, GPS):
        /// `strip:0`. The GPS position goes unless `output.info_gps` allows it
        /// (`ImageMetadata.withoutGPS`).
        case keepsMetadata
    }

    /// Where it goes in the docs.
    public enum Table: Sendable, Equatable {
        /// The options table (request-wide options and the resize family).
        case options
        /// The processors table (steps that change pixels).
        case processors
    }

    /// Parses one segment's arguments into the request being built.
    typealias Apply = @Sendable (_ a: OptionArguments, _ b: inout RequestBuilder, _ c: OptionContext) throws(SpecError) -> Void

    /// The long name, which the canonical form and the policy use (`resize`).
    public let name: String
    /// Other names the URL may use (`rs`), shortest last is not required.
    public let aliases: [String]
    /// The processing step it adds (`resize` for `w:`), nil for request-wide options (`q:`).
    /// `security.allowed_operations` lists these.
    public let operation: String?
    public let usages: [Usage]
    public let table: Table
    public let identity: Identity
    /// It can change the output's pixel size.
    public let changesSize: Bool
    /// It runs on every frame of an animation (processing steps do; output options apply to the
    /// encoded result once).
    public let perFrame: Bool
    /// Work of a simple pixel pass, in megapixel-passes per megapixel of the larger of its input
    /// and output (`RequestCost`); nil: the planner has a formula of its own for the step
    /// (resize, blur, sharpen, trim, shapes, watermark), or the option adds no step.
    public let work: Double?
    public let access: Access
    public let privacy: Privacy
    /// The request headers that can change an answer when the URL uses the option (`f:auto`:
    /// `Accept`; `w:auto`: the width hints); `Vary` and the edges' normalisation follow them.
    public let varies: [RequestInput]
    /// Extra tokens for the spec parser's fuzz dictionary (values, keywords) beyond the names.
    public let fuzzTokens: [String]
    let apply: Apply

    init(_ name: String, aliases: [String] = [], operation: String? = nil, table: Table = .options,
         identity: Identity = .canonical, changesSize: Bool = false, work: Double? = nil,
         access: Access = .policy, privacy: Privacy = .none, varies: [RequestInput] = [],
         fuzz: [String] = [], usages: [Usage], apply: @escaping Apply) {
        self.name = name
        self.aliases = aliases
        self.operation = operation
        self.usages = usages
        self.table = table
        self.identity = identity
        self.changesSize = changesSize
        self.perFrame = operation != nil
        self.work = work
        self.access = access
        self.privacy = privacy
        self.varies = varies
        self.fuzzTokens = fuzz
        self.apply = apply
    }

    /// The long name and the aliases.
    public var names: [String] { [name] + aliases }
}

/// What an option's parser sees besides its arguments: the parser's limits and tables, and
/// whether the option came from a preset.
struct OptionContext {
    let parser: SpecParser
    /// 0 for the URL's own options, 1 inside a preset.
    let presetDepth: Int
    /// The whole segment (`fn:` reads it raw) and the name it used.
    let segment: String
    let name: String

    var dimensions: ClosedRange<Int> { 0...parser.maxDimension }
}
