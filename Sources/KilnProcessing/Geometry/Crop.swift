import KilnModel

/// `crop:<w>:<h>[:<gravity>]` and `crop:<w>:<h>:<x>:<y>`: cuts a window out of the image.
///
/// The window is clamped to the image (a `crop:5000:5000` of a 640×480 image is the whole image).
/// With a gravity the window is placed as `Gravity.origin` says (compass edges, a focal point
/// centred as far as the image allows, `smart` by `SmartCrop`); with `x`/`y` its top-left corner
/// is there and it is cut at the right and bottom edges, while a corner at or beyond the image
/// edge is an `invalidArgument` (a 400). Sizes are in the request's pixels (`logicalSize`),
/// scaled to the input when it was shrunk on load. `cut:` (`CropOptions.edges`) cuts amounts off
/// each edge of the image as it is at this step; a cut that leaves nothing is an
/// `invalidArgument` (a 400).
public struct Crop: ImageProcessing, Sendable, Hashable {
    public var options: CropOptions

    public init(_ options: CropOptions) {
        self.options = options
    }

    public var identifier: String { Operation.crop(options).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard image.width > 0, image.height > 0 else {
            throw .invalidArgument(option: "crop", reason: "the image is empty")
        }
        guard options.edges != nil || (options.width > 0 && options.height > 0) else {
            throw .invalidArgument(option: "crop", reason: "width and height must be at least 1")
        }
        let window = try self.window(for: image, logicalSize: context.logicalSize)
        return Self.cut(image, x: window.x, y: window.y, width: window.width, height: window.height)
    }

    /// The window in `image` pixels.
    func window(for image: PixelBuffer, logicalSize: PixelSize) throws(ProcessingError)
        -> (x: Int, y: Int, width: Int, height: Int) {
        let logical = logicalSize.width > 0 && logicalSize.height > 0 ? logicalSize : image.size
        let lw = logical.width, lh = logical.height
        var x: Int, y: Int, w: Int, h: Int
        if let edges = options.edges {
            guard let window = edges.window(in: logical) else {
                throw .invalidArgument(option: "cut", reason: "\(edges.canonical) leaves nothing of the \(lw)x\(lh) image")
            }
            (x, y, w, h) = window
        } else if let ox = options.x, let oy = options.y {
            guard ox >= 0, oy >= 0, ox < lw, oy < lh else {
                throw .invalidArgument(option: "crop",
                                       reason: "the corner \(ox),\(oy) is outside the \(lw)x\(lh) image")
            }
            (x, y) = (ox, oy)
            w = min(options.width, lw - ox)
            h = min(options.height, lh - oy)
        } else {
            w = min(options.width, lw)
            h = min(options.height, lh)
            if let a = options.gravity.anchor {
                let g = options.gravity
                x = Int(g.origin(extent: Double(lw), window: Double(w), anchor: a.x).rounded())
                y = Int(g.origin(extent: Double(lh), window: Double(h), anchor: a.y).rounded())
            } else {
                // smart: search the input itself, in input pixels, then come back to logical ones.
                let fx = Double(image.width) / Double(lw), fy = Double(image.height) / Double(lh)
                let o = SmartCrop.origin(in: image, width: Int((Double(w) * fx).rounded()),
                                         height: Int((Double(h) * fy).rounded()))
                x = Int((Double(o.x) / fx).rounded())
                y = Int((Double(o.y) / fy).rounded())
            }
            x = min(max(0, x), lw - w)
            y = min(max(0, y), lh - h)
        }
        guard logical != image.size else { return (x, y, w, h) }
        // Shrunk on load: the same window in the input's pixels.
        let fx = Double(image.width) / Double(lw), fy = Double(image.height) / Double(lh)
        let ix = min(image.width - 1, Int((Double(x) * fx).rounded()))
        let iy = min(image.height - 1, Int((Double(y) * fy).rounded()))
        return (ix, iy, max(1, min(image.width - ix, Int((Double(w) * fx).rounded()))),
                max(1, min(image.height - iy, Int((Double(h) * fy).rounded()))))
    }

    /// The `width × height` pixels at `x`, `y` (which must lie inside the image), copied row by row.
    public static func cut(_ image: PixelBuffer, x: Int, y: Int, width: Int, height: Int) -> PixelBuffer {
        if x == 0, y == 0, width == image.width, height == image.height { return image }
        let c = image.channels
        let srcRow = image.rowBytes, dstRow = width * c
        let out = [UInt8](unsafeUninitializedCapacity: dstRow * height) { dst, initialised in
            image.pixels.withUnsafeBufferPointer { src in
                let s = src.baseAddress!, d = dst.baseAddress!
                for row in 0..<height {
                    (d + row * dstRow).update(from: s + (y + row) * srcRow + x * c, count: dstRow)
                }
            }
            initialised = dstRow * height
        }
        return PixelBuffer(width: width, height: height, channels: c,
                           isPremultiplied: image.isPremultiplied, pixels: out)
    }
}
