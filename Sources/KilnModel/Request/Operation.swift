/// One processing step of a request, in URL order (Nuke's processors array).
///
/// Operations are plain data; `KilnProcessing` turns each into an `ImageProcessing` value.
/// `canonical` is the step's part of the cache key: everything that changes pixels is in it.
public enum Operation: Sendable, Hashable {
    /// `trim:<threshold>[:<colour>[:<eh>:<ev>]]` (`t`): cuts uniform borders. Always the first
    /// operation, wherever the URL writes it (`RequestBuilder`).
    case trim(TrimOptions)
    /// `rs:<w>:<h>[:fit|fill|force]`, `w:`, `h:`; `g:` anchors the crop of `fill`.
    case resize(ResizeOptions)
    /// `crop:<w>:<h>[:<gravity>]` or `crop:<w>:<h>:<x>:<y>`; `cut:<t>:<r>:<b>:<l>` (`CropOptions.edges`).
    case crop(CropOptions)
    /// `pad:<t>:<r>:<b>:<l>` (or one or two values, as in CSS); filled with `bg:` or transparent.
    case pad(Padding)
    /// `extend:<w>:<h>[:<gravity>]` (`ex`): grows the canvas to at least `w`×`h` (0: that side
    /// as it is), the image placed at the gravity (default centre); filled with `bg:` or transparent.
    case extend(ExtendOptions)
    /// `circle[:<bg>]`: crops to the centred square and keeps an antialiased disc; outside it is
    /// transparent, or `bg` when given.
    case circle(background: RGBColor?)
    /// `rounded:<radius>` (`rc`): antialiased rounded corners, transparent outside.
    case rounded(radius: Int)
    /// `blur:<sigma>` (`bl`): Gaussian blur.
    case blur(sigma: Double)
    /// `sharpen:<sigma>` (`sh`): unsharp mask with a Gaussian of `sigma`.
    case sharpen(sigma: Double)
    /// `grayscale` (`gs`): Rec. 709 luma, R = G = B.
    case grayscale
    /// `sepia`.
    case sepia
    /// `tint:<hex>`: multiplies the luminance by the colour.
    case tint(RGBColor)
    /// `brightness:<-100..100>` (`br`).
    case brightness(Int)
    /// `contrast:<-100..100>` (`co`).
    case contrast(Int)
    /// `saturation:<-100..100>` (`sa`).
    case saturation(Int)
    /// `rotate:<90|180|270>` (`rot`), clockwise.
    case rotate(degrees: Int)
    /// `flip:<h|v|hv>`.
    case flip(FlipDirection)
    /// A processor registered by name in a custom build (see `CustomOperation`).
    case custom(CustomOperation)
    /// `watermark:<name>[:<opacity>[:<position>[:<x>:<y>[:<scale>]]]]` (`wm`): a configured
    /// watermark image blended onto the result; always after the other operations.
    case watermark(WatermarkOptions)

    /// The one identifier of this step, and the `identifier` of the processor that carries it out
    /// (`KilnProcessing` spells none of its own; `ProcessorFactoryTests` checks every operation):
    /// `canonical`, plus what the step takes from elsewhere in the URL (the colour `pad` takes
    /// from `bg:`), so that two different steps never share an identifier.
    public var identifier: String {
        switch self {
        case .pad(let p): canonical + (p.background.map { ":bg:\($0)" } ?? "")
        case .extend(let e): canonical + (e.background.map { ":bg:\($0)" } ?? "")
        default: canonical
        }
    }

    /// The step as the URL spells it (it parses back to the same step): its part of
    /// `ImageRequest.canonical`, the cache key's request. Options that apply to several steps
    /// (`bg:`) are spelled once, with the output options.
    public var canonical: String {
        switch self {
        case .trim(let t): t.canonical
        case .resize(let r): r.canonical
        case .crop(let c): c.canonical
        case .pad(let p): "pad:\(p.top):\(p.right):\(p.bottom):\(p.left)"
        case .extend(let e): "extend:\(e.width):\(e.height):\(e.gravity.canonical)"
        case .circle(let bg): bg.map { "circle:\($0)" } ?? "circle"
        case .rounded(let radius): "rounded:\(radius)"
        case .blur(let sigma): "blur:\(Gravity.format(sigma))"
        case .sharpen(let sigma): "sharpen:\(Gravity.format(sigma))"
        case .grayscale: "grayscale"
        case .sepia: "sepia"
        case .tint(let c): "tint:\(c)"
        case .brightness(let v): "brightness:\(v)"
        case .contrast(let v): "contrast:\(v)"
        case .saturation(let v): "saturation:\(v)"
        case .rotate(let d): "rotate:\(d)"
        case .flip(let f): "flip:\(f.rawValue)"
        case .custom(let c): c.identifier
        case .watermark(let w): w.canonical
        }
    }
}

/// `flip:h` mirrors left-right, `flip:v` top-bottom, `flip:hv` both.
public enum FlipDirection: String, Sendable, Hashable {
    case horizontal = "h"
    case vertical = "v"
    case both = "hv"
}

/// A crop window: a size and either a gravity or an explicit top-left corner, or the amounts cut
/// off each edge (`cut:`), whose window depends on the image's size at that step.
public struct CropOptions: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var gravity: Gravity
    /// Explicit top-left corner (`crop:w:h:x:y`); when set, `gravity` is ignored.
    public var x: Int?
    public var y: Int?
    /// `cut:`: the edges cut; when set, the size, gravity and corner are ignored.
    public var edges: EdgeCut?

    public init(width: Int, height: Int, gravity: Gravity = .center) {
        self.width = width
        self.height = height
        self.gravity = gravity
    }

    public init(width: Int, height: Int, x: Int, y: Int) {
        self.width = width
        self.height = height
        self.gravity = .northWest
        self.x = x
        self.y = y
    }

    /// `cut:<top>:<right>:<bottom>:<left>[:<width>:<height>]`.
    public init(edges: EdgeCut) {
        self.width = 0
        self.height = 0
        self.gravity = .northWest
        self.edges = edges
    }

    public var canonical: String {
        if let edges { return edges.canonical }
        if let x, let y { return "crop:\(width):\(height):\(x):\(y)" }
        return "crop:\(width):\(height):\(gravity.canonical)"
    }
}

/// Padding in pixels around the image, in CSS order.
public struct Padding: Sendable, Hashable {
    public var top: Int
    public var right: Int
    public var bottom: Int
    public var left: Int
    /// The fill colour (the request's `bg:`); nil pads with transparent pixels.
    public var background: RGBColor?

    public init(top: Int, right: Int, bottom: Int, left: Int, background: RGBColor? = nil) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
        self.background = background
    }
}

/// A canvas to grow to (`extend:<w>:<h>[:<gravity>]`): each side at least that long (0 leaves
/// it), the image at the gravity's anchor, the new pixels `bg:` or transparent.
public struct ExtendOptions: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var gravity: Gravity
    /// The fill colour (the request's `bg:`); nil extends with transparent pixels.
    public var background: RGBColor?

    public init(width: Int, height: Int, gravity: Gravity = .center, background: RGBColor? = nil) {
        self.width = width
        self.height = height
        self.gravity = gravity
        self.background = background
    }

    /// The padding that grows an image of `size` to the canvas.
    public func padding(for size: PixelSize) -> Padding {
        let dw = max(0, width - size.width), dh = max(0, height - size.height)
        let anchor = gravity.anchor ?? (0.5, 0.5)
        let left = Int((Double(dw) * anchor.x).rounded(.down)), top = Int((Double(dh) * anchor.y).rounded(.down))
        return Padding(top: top, right: dw - left, bottom: dh - top, left: left, background: background)
    }
}

/// A URL operation served by a processor registered in a custom build: `name[:arg…]`.
/// `identifier` is the processor's own identifier, which goes into the cache key.
public struct CustomOperation: Sendable, Hashable {
    public var name: String
    public var arguments: [String]
    public var identifier: String

    public init(name: String, arguments: [String], identifier: String) {
        self.name = name
        self.arguments = arguments
        self.identifier = identifier
    }
}
