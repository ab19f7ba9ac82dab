/// How a resize fits the source into the requested box.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the box, keeping the aspect ratio (default).
    case fit
    /// Scale to cover the box, keeping the aspect ratio, then crop the overflow (at the gravity).
    case fill
    /// Scale to exactly the box; the aspect ratio is not kept.
    case force
    /// `fill` when the source and the box have the same orientation (both landscape, square
    /// counting as landscape, or both portrait), `fit` otherwise; `fit` with one side given
    /// (imgproxy's `auto`). Resolved against the image's size when planned (`resolved(for:)`).
    case auto
}

/// A resize request: `rs:<w>:<h>[:<mode>]`, `w:<w>`, `h:<h>`; `0` keeps the aspect ratio.
public struct ResizeOptions: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var mode: ResizeMode
    /// Upscaling is off unless `enlarge:1` was asked for.
    public var enlarge: Bool
    /// Where `fill` crops the overflow (`g:`); default centre.
    public var gravity: Gravity

    public init(width: Int, height: Int, mode: ResizeMode = .fit, enlarge: Bool = false, gravity: Gravity = .center) {
        self.width = width
        self.height = height
        self.mode = mode
        self.enlarge = enlarge
        self.gravity = gravity
    }

    /// `rs:300:200:fill`, then `/g:<gravity>` when a fill is not centred and `/el:1` when upscaling.
    public var canonical: String {
        var s = "rs:\(width):\(height):\(mode.rawValue)"
        if (mode == .fill || mode == .auto) && gravity != .center { s += "/g:\(gravity.canonical)" }
        if enlarge { s += "/el:1" }
        return s
    }

    /// `auto` resolved to `fill` or `fit` for an image of `source` pixels; other modes unchanged.
    public func resolved(for source: PixelSize) -> ResizeOptions {
        guard mode == .auto else { return self }
        var copy = self
        let landscapeBox = width >= height, landscapeSource = source.width >= source.height
        copy.mode = width > 0 && height > 0 && landscapeBox == landscapeSource ? .fill : .fit
        return copy
    }

    /// The target box after a device-pixel-ratio multiplier.
    public func scaled(by factor: Int) -> ResizeOptions {
        var copy = self
        copy.width *= factor
        copy.height *= factor
        return copy
    }
}
