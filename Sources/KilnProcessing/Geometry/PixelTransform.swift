import KilnCore

/// A clockwise rotation by a multiple of 90°.
public enum Rotation: Int, Sendable, Hashable, CaseIterable {
    case degrees90 = 90
    case degrees180 = 180
    case degrees270 = 270
}

/// A mirror axis: `horizontal` swaps left and right, `vertical` swaps top and bottom.
public enum FlipDirection: String, Sendable, Hashable, CaseIterable {
    case horizontal
    case vertical
}

/// Lossless geometric transforms (the eight symmetries of the rectangle) over `PixelBuffer`.
///
/// Each is a pure re-indexing: destination pixel `(x, y)` copies source pixel
/// `base + x * stepX + y * stepY` (in pixels). Transforms that swap the axes walk the
/// destination in tiles so the strided source reads stay in cache.
public enum PixelTransform {
    /// Rotates clockwise by `rotation`; 90° and 270° swap width and height.
    public static func rotate(_ image: PixelBuffer, by rotation: Rotation) -> PixelBuffer {
        let w = image.width, h = image.height
        switch rotation {
        case .degrees90:  // dst(x, y) = src(y, h - 1 - x)
            return remap(image, width: h, height: w, base: (h - 1) * w, stepX: -w, stepY: 1)
        case .degrees180: // dst(x, y) = src(w - 1 - x, h - 1 - y)
            return remap(image, width: w, height: h, base: (h - 1) * w + w - 1, stepX: -1, stepY: -w)
        case .degrees270: // dst(x, y) = src(w - 1 - y, x)
            return remap(image, width: h, height: w, base: w - 1, stepX: w, stepY: -1)
        }
    }

    /// Mirrors the image; the size is unchanged.
    public static func flip(_ image: PixelBuffer, _ direction: FlipDirection) -> PixelBuffer {
        let w = image.width, h = image.height
        switch direction {
        case .horizontal: // dst(x, y) = src(w - 1 - x, y)
            return remap(image, width: w, height: h, base: w - 1, stepX: -1, stepY: w)
        case .vertical:   // dst(x, y) = src(x, h - 1 - y)
            return remap(image, width: w, height: h, base: (h - 1) * w, stepX: 1, stepY: -w)
        }
    }

    /// Mirrors across the main diagonal (top-left to bottom-right): `dst(x, y) = src(y, x)`.
    public static func transpose(_ image: PixelBuffer) -> PixelBuffer {
        remap(image, width: image.height, height: image.width, base: 0, stepX: image.width, stepY: 1)
    }

    /// Mirrors across the anti-diagonal: `dst(x, y) = src(w - 1 - y, h - 1 - x)`.
    public static func transverse(_ image: PixelBuffer) -> PixelBuffer {
        let w = image.width, h = image.height
        return remap(image, width: h, height: w, base: (h - 1) * w + w - 1, stepX: -w, stepY: -1)
    }

    /// Copies `src[base + x * stepX + y * stepY]` into `dst(x, y)` for a `width × height` result.
    static func remap(_ image: PixelBuffer, width: Int, height: Int,
                      base: Int, stepX: Int, stepY: Int) -> PixelBuffer {
        let channels = image.channels
        var out = [UInt8](repeating: 0, count: width * height * channels)
        guard width > 0, height > 0 else {
            return PixelBuffer(width: width, height: height, channels: channels,
                               isPremultiplied: image.isPremultiplied, pixels: out)
        }
        // Row-preserving transforms read sequentially; axis-swapping ones read a column per
        // destination row, so walk those in square tiles.
        let tile = abs(stepX) == 1 ? max(width, height) : 64
        image.pixels.withUnsafeBufferPointer { srcBuffer in
            out.withUnsafeMutableBufferPointer { dstBuffer in
                let src = UnsafeRawPointer(srcBuffer.baseAddress!)
                let dst = UnsafeMutableRawPointer(dstBuffer.baseAddress!)
                for tileY in stride(from: 0, to: height, by: tile) {
                    let yEnd = min(tileY + tile, height)
                    for tileX in stride(from: 0, to: width, by: tile) {
                        let xEnd = min(tileX + tile, width)
                        for y in tileY..<yEnd {
                            var s = (base + tileX * stepX + y * stepY) * channels
                            var d = (y * width + tileX) * channels
                            let sStep = stepX * channels
                            if channels == 4 {
                                for _ in tileX..<xEnd {
                                    let v = src.loadUnaligned(fromByteOffset: s, as: UInt32.self)
                                    dst.storeBytes(of: v, toByteOffset: d, as: UInt32.self)
                                    s += sStep
                                    d += 4
                                }
                            } else {
                                for _ in tileX..<xEnd {
                                    for c in 0..<channels {
                                        dst.storeBytes(of: src.load(fromByteOffset: s + c, as: UInt8.self),
                                                       toByteOffset: d + c, as: UInt8.self)
                                    }
                                    s += sStep
                                    d += channels
                                }
                            }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels,
                           isPremultiplied: image.isPremultiplied, pixels: out)
    }
}
