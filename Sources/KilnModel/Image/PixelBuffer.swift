/// Decoded pixels: 8 bits per channel, tightly packed rows (`rowBytes == width * channels`).
///
/// Everything above the codec layer works on this type; no C pointer crosses it.
/// Channels are RGB (3) or RGBA (4). Grey sources are expanded to RGB by the decoders.
public struct PixelBuffer: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// 3 (RGB) or 4 (RGBA).
    public var channels: Int
    /// True when the colour channels of an RGBA buffer are multiplied by alpha.
    public var isPremultiplied: Bool
    /// `height * rowBytes` bytes, row-major, top row first.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, channels: Int, isPremultiplied: Bool = false, pixels: [UInt8]) {
        precondition(channels == 3 || channels == 4, "PixelBuffer supports RGB and RGBA")
        precondition(pixels.count == width * height * channels, "pixel storage does not match the size")
        self.width = width
        self.height = height
        self.channels = channels
        self.isPremultiplied = isPremultiplied
        self.pixels = pixels
    }

    /// A buffer filled with zero bytes (transparent black for RGBA).
    public init(width: Int, height: Int, channels: Int) {
        self.init(width: width, height: height, channels: channels,
                  pixels: [UInt8](repeating: 0, count: width * height * channels))
    }

    public var rowBytes: Int { width * channels }
    public var hasAlpha: Bool { channels == 4 }
    public var pixelCount: Int { width * height }
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// The channel values of the pixel at (x, y).
    public func pixel(x: Int, y: Int) -> [UInt8] {
        let start = (y * width + x) * channels
        return Array(pixels[start..<start + channels])
    }
}

/// A width and a height in pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var pixelCount: Int { width * height }
    public var transposed: PixelSize { PixelSize(width: height, height: width) }
    public var description: String { "\(width)x\(height)" }
}
