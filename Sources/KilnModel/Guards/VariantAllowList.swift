/// Which sizes and qualities a URL that is neither signed nor trusted may ask for
/// (`limits.allowed_widths`, `limits.allowed_heights`, `limits.allowed_qualities`), as
/// Next.js's `deviceSizes`/`qualities` and Cloudflare's width buckets do: an unsigned loader
/// cannot fill the caches with one variant per pixel.
///
/// What is checked, after presets expanded and after `dpr` multiplied:
/// - the width and the height of every resize (`rs:`, `w:`, `h:`); 0 (keep the aspect ratio)
///   always passes;
/// - `q:` when the URL gives one (the configured default quality always passes).
///
/// Crops and pads are not sizes of this list: they cut or add a border around a resized image;
/// a deployment that wants no free-form crops turns them off with `security.allowed_operations`.
///
/// `refuse` answers a value outside its list with a 400 naming the setting and the allowed
/// values; `snap` moves it up to the next allowed value (the largest when above all), in the
/// request itself, so the cache key is the snapped request's and every URL that snaps to one
/// variant shares its cache entry and ETag.
public struct VariantAllowList: Sendable, Equatable {
    /// `limits.allowed_policy`.
    public enum Policy: String, Sendable, Equatable, CaseIterable {
        /// 400 naming the setting and the allowed values.
        case refuse
        /// Up to the next allowed value; the largest when above all.
        case snap
    }

    /// Sorted, without duplicates; empty: any value.
    public var widths: [Int]
    public var heights: [Int]
    public var qualities: [Int]
    public var policy: Policy
    /// The setting names, for the refusal's message.
    public var keys: Keys

    public struct Keys: Sendable, Equatable {
        public var widths, heights, qualities: String
        public init(widths: String, heights: String, qualities: String) {
            self.widths = widths
            self.heights = heights
            self.qualities = qualities
        }
    }

    public init(widths: [Int] = [], heights: [Int] = [], qualities: [Int] = [], policy: Policy = .refuse,
                keys: Keys = Keys(widths: "widths", heights: "heights", qualities: "qualities")) {
        self.widths = Array(Set(widths)).sorted()
        self.heights = Array(Set(heights)).sorted()
        self.qualities = Array(Set(qualities)).sorted()
        self.policy = policy
        self.keys = keys
    }

    /// Nothing to check.
    public var isOpen: Bool { widths.isEmpty && heights.isEmpty && qualities.isEmpty }

    /// `request` with every checked value in its list (snapped), or a 400 (`refuse`).
    public func apply(to request: ImageRequest) throws(SpecError) -> ImageRequest {
        guard !isOpen else { return request }
        var out = request
        for (i, op) in out.operations.enumerated() {
            guard case .resize(var r) = op else { continue }
            if r.width != 0 { r.width = try allowed(r.width, in: widths, what: "width", key: keys.widths) }
            if r.height != 0 { r.height = try allowed(r.height, in: heights, what: "height", key: keys.heights) }
            out.operations[i] = .resize(r)
        }
        try out.output.mapQualities { (q) throws(SpecError) in try allowed(q, in: qualities, what: "quality", key: keys.qualities) }
        return out
    }

    /// `value` when in `list` (or the list is empty); else the snapped value or the refusal.
    func allowed(_ value: Int, in list: [Int], what: String, key: String) throws(SpecError) -> Int {
        guard !list.isEmpty, !list.contains(value) else { return value }
        switch policy {
        case .snap:
            return list.first { $0 >= value } ?? list[list.count - 1]
        case .refuse:
            let values = list.map(String.init).joined(separator: ", ")
            throw .invalidOption(segment: "\(what) \(value)",
                                 reason: "not in \(key) (\(values)); only signed URLs may ask for other values")
        }
    }

    /// `320, 640,1280` to `[320, 640, 1280]`: whole numbers in `range`, separated by commas
    /// (spaces allowed, empty entries skipped); nil for anything else.
    public static func parseList(_ raw: String, in range: ClosedRange<Int>) -> [Int]? {
        var out: [Int] = []
        for part in raw.split(separator: ",") {
            let digits = part.filter { $0 != " " && $0 != "\t" }
            if digits.isEmpty { continue }
            guard let v = NumberGrammar.integer(String(digits)), range.contains(v) else { return nil }
            out.append(v)
        }
        return out
    }
}
