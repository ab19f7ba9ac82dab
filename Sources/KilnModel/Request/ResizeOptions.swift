/// How a resize fits the source into the requested box.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the box, keeping the aspect ratio (default).
    case fit
    /// Scale to cover the box, keeping the aspect ratio, then crop the overflow (at the gravity).
    case fill
    /// Scale to exactly the box; the aspect ratio is not kept.
    case force
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
        if mode == .fill && gravity != .center { s += "/g:\(gravity.canonical)" }
        if enlarge { s += "/el:1" }
        return s
    }

    /// The target box after a device-pixel-ratio multiplier.
    public func scaled(by factor: Int) -> ResizeOptions {
        var copy = self
        copy.width *= factor
        copy.height *= factor
        return copy
    }
}
