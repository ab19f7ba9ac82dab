/// A request header that changes an answer besides the URL, described once: the names Kiln reads,
/// the classes of values it tells apart, and how an edge cache must reduce the header before its
/// lookup so that it keeps one object per class (`varnish/kiln.vcl`). `Vary` names come from here
/// (`HeaderName.Hint`, `ImageHandler`), and `OptionDeclaration.varies` points at these values.
///
/// A new input is added here, given to the options that consult it, and normalised in the VCL:
/// `RequestInputTests` checks that the shipped VCL sets every one of them before the lookup.
public struct RequestInput: Sendable, Hashable, CaseIterable {
    /// How an edge reduces the header to what Kiln distinguishes.
    public enum EdgeClasses: Sendable, Hashable {
        /// AVIF and WebP, WebP only, neither (`FormatNegotiation`).
        case acceptFormats
        /// A width in pixels, snapped up to the first of `http.hint_widths`.
        case widthBuckets
        /// A pixel ratio, clamped to 1...4 and rounded up to a multiple of 0.5.
        case ratioHalves
        /// On or off (`Save-Data: on`, `ECT: 2g`/`slow-2g`).
        case onOff
        /// One of the origins `http.allow_origin` lists, or none of them.
        case listedOrNot
    }

    /// The header's name as Kiln answers it in `Vary` (`Sec-CH-Width`).
    public let name: String
    /// Older names read the same way (`Width`), listed in `Vary` beside it.
    public let legacyNames: [String]
    public let classes: EdgeClasses
    /// What reads it, one line for the docs.
    public let doc: String

    /// Every name, the current one first.
    public var names: [String] { [name] + legacyNames }

    public static let accept = RequestInput(
        name: "Accept", legacyNames: [], classes: .acceptFormats,
        doc: "`f:auto`: the first of `http.auto_formats` the client accepts")
    public static let width = RequestInput(
        name: "Sec-CH-Width", legacyNames: ["Width"], classes: .widthBuckets,
        doc: "`w:auto`: the image slot in device pixels")
    public static let viewportWidth = RequestInput(
        name: "Sec-CH-Viewport-Width", legacyNames: ["Viewport-Width"], classes: .widthBuckets,
        doc: "`w:auto` without a width hint: the viewport in CSS pixels × the ratio")
    public static let dpr = RequestInput(
        name: "Sec-CH-DPR", legacyNames: ["DPR"], classes: .ratioHalves,
        doc: "`ch:1` or `w:auto` without `dpr:`: multiplies the URL's sizes")
    public static let saveData = RequestInput(
        name: "Save-Data", legacyNames: [], classes: .onOff,
        doc: "URLs without `q:` (`http.save_data`): `http.save_data_quality`")
    public static let ect = RequestInput(
        name: "ECT", legacyNames: [], classes: .onOff,
        doc: "with `http.save_data_ect`: `2g` and `slow-2g` count as `Save-Data: on`")
    public static let origin = RequestInput(
        name: "Origin", legacyNames: [], classes: .listedOrNot,
        doc: "`http.allow_origin` as a list: the answer's `Access-Control-Allow-Origin`")

    public static let allCases: [RequestInput] = [accept, width, viewportWidth, dpr, saveData, ect, origin]
}
