/// `trim:<threshold>[:<hex colour>[:<equal_h>:<equal_v>]]` (`t`; imgproxy's `t:threshold:color:equal_h:equal_v`,
/// thumbor's `trim`): cut the uniform borders of the image.
///
/// A border pixel is one whose every channel differs from the border colour by at most `threshold`
/// (0...255); the colour is `color`, or the top-left pixel's when nil. In an image with alpha a fully
/// transparent pixel is always border, and alpha is compared too. `equalHorizontal` makes the left
/// and right cuts equal (the smaller of the two), `equalVertical` the top and bottom ones.
///
/// Trim always runs first, on the full-size decode (no shrink-on-load), whatever its place in the
/// URL: the request parser puts it at the head of `ImageRequest.operations`, and the canonical form
/// spells it first. An image that is border all over is left unchanged.
public struct TrimOptions: Sendable, Hashable {
    public var threshold: Int
    public var color: RGBColor?
    public var equalHorizontal: Bool
    public var equalVertical: Bool

    public init(threshold: Int, color: RGBColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
        self.threshold = threshold
        self.color = color
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    /// `trim:10`, `trim:10:ffffff`, `trim:10:ffffff:1:0`; without a colour but with the equal
    /// flags, the colour field is empty (`trim:10::1:1`), as imgproxy writes it.
    public var canonical: String {
        var s = "trim:\(threshold)"
        if color != nil || equalHorizontal || equalVertical { s += ":" + (color?.description ?? "") }
        if equalHorizontal || equalVertical { s += ":\(equalHorizontal ? 1 : 0):\(equalVertical ? 1 : 0)" }
        return s
    }
}
