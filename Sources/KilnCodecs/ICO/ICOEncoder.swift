import KilnModel

/// Writes ICO (`f:ico`): one PNG-compressed entry (Windows Vista's PNG-in-ICO, which every
/// current browser and Windows read) of the result at its own size, at most 256 × 256
/// (`ImageFormat.maxDimension`; larger is a 413 before encoding). The PNG is RGBA (icons are
/// 32-bit); an RGB result gets an opaque alpha channel.
///
/// Layout: ICONDIR (reserved 0, type 1, one entry), ICONDIRENTRY (width and height, 0 meaning
/// 256; no palette; 1 plane; 32 bits; the PNG's length and offset 22), then the PNG.
public struct ICOEncoder: ImageEncoding, Sendable {
    public init() {}

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        guard image.width >= 1, image.height >= 1, image.width <= 256, image.height <= 256 else {
            throw .failed("ICO entries are at most 256x256 pixels; this image is \(image.width)x\(image.height)")
        }
        var rgba = image
        if image.channels == 3 {
            var pixels = [UInt8](repeating: 255, count: image.width * image.height * 4)
            for i in 0..<(image.width * image.height) {
                pixels[4 * i] = image.pixels[3 * i]
                pixels[4 * i + 1] = image.pixels[3 * i + 1]
                pixels[4 * i + 2] = image.pixels[3 * i + 2]
            }
            rgba = PixelBuffer(width: image.width, height: image.height, channels: 4, pixels: pixels)
        }
        var pngOptions = options
        pngOptions.format = .png
        pngOptions.progressive = false
        pngOptions.metadata = nil
        let png = try PNGEncoder().encode(rgba, options: pngOptions)
        var out: [UInt8] = [0, 0, 1, 0, 1, 0]
        out += [UInt8(image.width & 0xFF), UInt8(image.height & 0xFF), 0, 0, 1, 0, 32, 0]
        let length = png.count, offset = 22
        out += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24 & 0xFF)]
        out += [UInt8(offset), 0, 0, 0]
        return out + png
    }
}
