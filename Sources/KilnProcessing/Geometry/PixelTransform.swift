import KilnModel

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
        // Row-preserving transforms read sequentially; axis-swapping ones read a column per
        // destination row, so walk those in square tiles.
        let tile = abs(stepX) == 1 ? max(width, height) : 64
        let out = [UInt8](unsafeUninitializedCapacity: width * height * channels) { dstBuffer, count in
            count = dstBuffer.count
            guard count > 0 else { return }
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                let src = UnsafeRawPointer(srcBuffer.baseAddress!)
                let dst = UnsafeMutableRawPointer(dstBuffer.baseAddress!)
                for tileY in stride(from: 0, to: height, by: tile) {
                    let yEnd = min(tileY + tile, height)
                    for tileX in stride(from: 0, to: width, by: tile) {
                        let xEnd = min(tileX + tile, width)
                        for y in tileY..<yEnd {
                            let s = (base + tileX * stepX + y * stepY) * channels
                            let d = (y * width + tileX) * channels
                            if channels == 4 {
                                copyRun4(src + s, stepX * 4, dst + d, xEnd - tileX)
                            } else {
                                copyRun3(src + s, stepX * 3, dst + d, xEnd - tileX)
                            }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels,
                           isPremultiplied: image.isPremultiplied, pixels: out)
    }

    /// Copies `count` 4-byte pixels, reading every `step` bytes, writing contiguously.
    @inline(__always)
    private static func copyRun4(_ src: UnsafeRawPointer, _ step: Int,
                                 _ dst: UnsafeMutableRawPointer, _ count: Int) {
        if step == 4 {
            dst.copyMemory(from: src, byteCount: count * 4)
            return
        }
        var s = 0
        for i in 0..<count {
            let v = src.loadUnaligned(fromByteOffset: s, as: UInt32.self)
            dst.storeBytes(of: v, toByteOffset: i * 4, as: UInt32.self)
            s += step
        }
    }

    /// Copies `count` 3-byte pixels, reading every `step` bytes, writing contiguously.
    @inline(__always)
    private static func copyRun3(_ src: UnsafeRawPointer, _ step: Int,
                                 _ dst: UnsafeMutableRawPointer, _ count: Int) {
        if step == 3 {
            dst.copyMemory(from: src, byteCount: count * 3)
            return
        }
        var s = 0
        for i in 0..<count {
            let rg = src.loadUnaligned(fromByteOffset: s, as: UInt16.self)
            let b = src.load(fromByteOffset: s + 2, as: UInt8.self)
            dst.storeBytes(of: rg, toByteOffset: i * 3, as: UInt16.self)
            dst.storeBytes(of: b, toByteOffset: i * 3 + 2, as: UInt8.self)
            s += step
        }
    }
}
