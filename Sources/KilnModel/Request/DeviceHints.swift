/// What a URL leaves to the device it is shown on (`ch:1`, `w:auto`), in image words: the HTTP
/// layer reads the device's hints (`ClientHints` in KilnHTTP) and answers with a `DeviceAnswer`
/// while the URL is parsed, so the request that comes out of the parser, and with it the cache
/// key, already holds the resolved width, DPR and quality. `ch:` itself is not part of
/// `ImageRequest.canonical`: `ch:1/w:auto/a.jpg` answered for a 640 px slot is `w:640/a.jpg`.
public struct DeviceHintUse: Sendable, Hashable {
    /// The URL opted in (`ch:1`, or `w:auto`, which implies it).
    public var enabled = false
    /// `w:auto`: the resize's width comes from the device (its slot or viewport width).
    public var width = false
    /// The URL has no `dpr:` of its own: the device's pixel ratio multiplies the URL's sizes.
    public var dpr = false
    /// The URL has no `q:` and asks for an image (not `f:json`/`f:blurhash`/`f:thumbhash`): a
    /// data-saving device may get a lower quality.
    public var quality = false
    /// `f:auto` is in the URL.
    public var autoFormat = false
    /// The URL's own `dpr:` (1 without one): the ratio of a viewport width when `dpr` is false.
    public var urlDPR = 1.0

    public init(enabled: Bool = false, width: Bool = false, dpr: Bool = false, quality: Bool = false, autoFormat: Bool = false) {
        self.enabled = enabled
        self.width = width
        self.dpr = dpr
        self.quality = quality
        self.autoFormat = autoFormat
    }

    /// Whether anything can be resolved from the device for this URL.
    public var consultsDevice: Bool { enabled && (width || dpr) }
}

/// The device's answer for a `DeviceHintUse`: nil fields leave the URL as written.
public struct DeviceAnswer: Sendable, Hashable {
    /// The width in device pixels for `w:auto` (already multiplied by the pixel ratio; not
    /// multiplied again).
    public var width: Int?
    /// The pixel ratio for the URL's other sizes (in `SpecParser`'s `dpr:` range, 1...4).
    public var dpr: Double?
    /// The quality to write when the URL has no `q:` (Save-Data).
    public var quality: Int?

    public init(width: Int? = nil, dpr: Double? = nil, quality: Int? = nil) {
        self.width = width
        self.dpr = dpr
        self.quality = quality
    }
}

/// Resolves a URL's `DeviceHintUse` into values (KilnHTTP's `ClientHints` reads the headers).
public protocol DeviceHintResolving: Sendable {
    func resolve(_ use: DeviceHintUse) -> DeviceAnswer
}
