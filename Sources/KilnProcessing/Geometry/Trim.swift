import KilnModel

/// `trim:<threshold>[:<colour>[:<equal_h>:<equal_v>]]` (`t`): cuts the uniform borders.
///
/// The border colour is the option's colour (opaque) or the top-left pixel's. A pixel is border
/// when every channel (alpha too, in an RGBA image) is within `threshold` of it, or when it is
/// fully transparent. The box kept is the bounding box of the pixels that are not border; the
/// equal flags then make the left and right (top and bottom) cuts the smaller of the two. An image
/// that is border all over is returned unchanged (never a 0×0 result).
///
/// The request puts trim first and decodes at full size for it (no shrink-on-load, see
/// `ImageRequest.leadingResize`), so the box is exact in the source's pixels (after orientation).
/// The scan reads the border and one pixel past it on each row: a photo without a border costs a
/// few rows, an image that is border all over one pass.
public struct Trim: ImageProcessing, Sendable, Hashable {
    public var options: TrimOptions

    public init(_ options: TrimOptions) {
        self.options = options
    }

    public var identifier: String { Operation.trim(options).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard let box = box(in: image) else { return image }
        return Crop.cut(image, x: box.x, y: box.y, width: box.width, height: box.height)
    }

    /// The window kept, in `image` pixels; nil when every pixel is border (or the image is empty).
    public func box(in image: PixelBuffer) -> (x: Int, y: Int, width: Int, height: Int)? {
        let w = image.width, h = image.height, c = image.channels
        guard w > 0, h > 0 else { return nil }
        let px = image.pixels
        let reference: [Int] = if let colour = options.color {
            colour.bytes.map(Int.init) + (c == 4 ? [255] : [])
        } else {
            px[0..<c].map(Int.init)
        }
        let t = options.threshold
        let r0 = reference[0], r1 = reference[1], r2 = reference[2], r3 = c == 4 ? reference[3] : 0
        func isBorder(_ x: Int, _ y: Int) -> Bool {
            let i = (y * w + x) * c
            if c == 4 {
                let a = Int(px[i + 3])
                if a == 0 { return true }
                if abs(a - r3) > t { return false }
            }
            return abs(Int(px[i]) - r0) <= t && abs(Int(px[i + 1]) - r1) <= t && abs(Int(px[i + 2]) - r2) <= t
        }
        func rowIsBorder(_ y: Int) -> Bool {
            for x in 0..<w where !isBorder(x, y) { return false }
            return true
        }
        guard let top = (0..<h).first(where: { !rowIsBorder($0) }) else { return nil }
        var bottom = h - 1
        while bottom > top && rowIsBorder(bottom) { bottom -= 1 }
        // Columns: each row is read from the left up to the leftmost content found so far, and
        // from the right down to the rightmost one.
        var left = w, right = -1
        for y in top...bottom {
            var x = 0
            while x < left && isBorder(x, y) { x += 1 }
            if x < left { left = x }
            var xr = w - 1
            while xr > right && isBorder(xr, y) { xr -= 1 }
            if xr > right { right = xr }
        }
        var cutLeft = left, cutRight = w - 1 - right, cutTop = top, cutBottom = h - 1 - bottom
        if options.equalHorizontal { (cutLeft, cutRight) = (min(cutLeft, cutRight), min(cutLeft, cutRight)) }
        if options.equalVertical { (cutTop, cutBottom) = (min(cutTop, cutBottom), min(cutTop, cutBottom)) }
        return (cutLeft, cutTop, w - cutLeft - cutRight, h - cutTop - cutBottom)
    }
}
