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
        // Each channel's accepted range, as bytes: a pixel is border when every channel is in it.
        let t = options.threshold
        let low = reference.map { UInt8(max(0, $0 - t)) }, high = reference.map { UInt8(min(255, $0 + t)) }
        let l0 = low[0], l1 = low[1], l2 = low[2], h0 = high[0], h1 = high[1], h2 = high[2]
        let l3 = c == 4 ? low[3] : 0, h3 = c == 4 ? high[3] : 255
        func isBorder(at i: Int) -> Bool {
            if c == 4 {
                let a = px[i + 3]
                if a == 0 { return true }
                if a < l3 || a > h3 { return false }
            }
            let r = px[i], g = px[i + 1], b = px[i + 2]
            return r >= l0 && r <= h0 && g >= l1 && g <= h1 && b >= l2 && b <= h2
        }
        func isBorder(_ x: Int, _ y: Int) -> Bool { isBorder(at: (y * w + x) * c) }
        func rowIsBorder(_ y: Int) -> Bool {
            var i = y * w * c
            let end = i + w * c
            while i < end {
                if !isBorder(at: i) { return false }
                i += c
            }
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
