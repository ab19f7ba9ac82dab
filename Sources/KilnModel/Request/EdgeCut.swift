/// `cut:<top>:<right>:<bottom>:<left>[:<width>:<height>]`: pixels cut off each edge of the image
/// as it is at this step (the source's pixels when written before a resize), Cloudflare's
/// `trim`. Where `crop:<w>:<h>:<x>:<y>` needs the image's size to cut the right and bottom edges,
/// `cut` finds the window at processing time (and the size planner from the source's header).
/// `width`/`height` (0: not given) keep that much from the left/top cut instead of cutting a
/// right/bottom amount; a window that is larger than what is left is clamped to it.
/// Carried by `CropOptions.edges`: the processor is `Crop`, the operation `crop`.
public struct EdgeCut: Sendable, Hashable {
    public var top: Int
    public var right: Int
    public var bottom: Int
    public var left: Int
    /// The width kept from `left` (0: everything up to `right`'s cut).
    public var width: Int
    /// The height kept from `top` (0: everything up to `bottom`'s cut).
    public var height: Int

    public init(top: Int, right: Int, bottom: Int, left: Int, width: Int = 0, height: Int = 0) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
        self.width = width
        self.height = height
    }

    /// The window kept of an image of `size`, nil when the cuts leave nothing.
    public func window(in size: PixelSize) -> (x: Int, y: Int, width: Int, height: Int)? {
        let restW = size.width - left, restH = size.height - top
        let w = width > 0 ? min(width, restW) : restW - right
        let h = height > 0 ? min(height, restH) : restH - bottom
        guard w > 0, h > 0 else { return nil }
        return (left, top, w, h)
    }

    /// The step as the URL spells it: the four edges, then the kept size when one is given.
    public var canonical: String {
        let edges = "cut:\(top):\(right):\(bottom):\(left)"
        return width == 0 && height == 0 ? edges : edges + ":\(width):\(height)"
    }
}
