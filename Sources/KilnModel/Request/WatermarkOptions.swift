/// `watermark:<name>[:<opacity>[:<position>[:<x>:<y>[:<scale>]]]]` (`wm:`), in the spirit of
/// imgproxy's `wm:opacity:position:x:y:scale`: one of the operator's named watermark images
/// (`[watermarks]` in the configuration, never a URL) blended onto the finished image.
///
/// - `opacity`: 0...1 (default 1), multiplies the watermark's own alpha.
/// - `position`: a compass gravity (`center`, `north`, `south`, `east`, `west`, `ne`, `nw`, `se`,
///   `sw`; default `center`) or `tile` (imgproxy's `re`) to repeat it over the whole image.
/// - `x`, `y`: for a gravity, the offset in pixels inward from the edges the gravity names (for
///   the centre axis: to the right / down), negative values push it outwards; for `tile`, the
///   gap between tiles. Multiplied by `dpr:` like other sizes.
/// - `scale`: the watermark's width as a fraction of the output's width (0...1, height kept in
///   proportion); 0 (default) keeps the watermark's own size.
///
/// Whatever its place in the URL, a watermark runs after every other operation (it goes on the
/// final image, before JPEG flattening and encoding); `canonical` lists it last.
public struct WatermarkOptions: Sendable, Hashable {
    /// Where the watermark goes.
    public enum Position: Sendable, Hashable {
        /// A compass gravity (never `smart` or a focal point).
        case gravity(Gravity)
        /// Repeated from the top-left corner over the whole image, `x`/`y` pixels apart.
        case tile

        public var canonical: String {
            switch self {
            case .gravity(let g): g.canonical
            case .tile: "tile"
            }
        }
    }

    public var name: String
    public var opacity: Double
    public var position: Position
    public var x: Int
    public var y: Int
    public var scale: Double

    public init(name: String, opacity: Double = 1, position: Position = .gravity(.center),
                x: Int = 0, y: Int = 0, scale: Double = 0) {
        self.name = name
        self.opacity = opacity
        self.position = position
        self.x = x
        self.y = y
        self.scale = scale
    }

    /// Every argument spelled out: `watermark:logo:0.5:se:10:10:0.25`.
    public var canonical: String {
        "watermark:\(name):\(Gravity.format(opacity)):\(position.canonical):\(x):\(y):\(Gravity.format(scale))"
    }

    /// Parses a position: a compass gravity, or `tile` / `re`. Nil for anything else.
    public static func position(_ text: String) -> Position? {
        if text == "tile" || text == "re" { return .tile }
        guard let g = Gravity.parse([text][...]), g.anchor != nil else { return nil }
        if case .focalPoint = g { return nil }
        return .gravity(g)
    }

    /// A watermark name as the configuration may declare it: 1 to 64 lower-case letters, digits,
    /// `_` or `-`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
                || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
        }
    }
}
