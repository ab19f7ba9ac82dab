import CKilnResample

/// The fixed-point pass pair of `Resampler`: hands `WeightTable`s, quantised, and the pixel
/// bytes to CKilnResample's kernel (the only place KilnProcessing touches a C pointer).
///
/// Works on tightly packed 8-bit rows of 3 (RGB) or 4 (RGBA) channels. Alpha is
/// handled as `Resampler.AlphaHandling` says, like the float path: straight RGBA is
/// premultiplied on the way in (with 7 extra bits) and divided by the unclamped alpha on the way
/// out; premultiplied RGBA keeps colour at or below alpha.
package struct FixedPointResampler: Sendable {
    let kernel: ResamplerKernel

    package init(kernel: ResamplerKernel) { self.kernel = kernel }

    /// The output bytes (`horizontal.count × vertical.count × channels`), or nil when the
    /// kernel declined (arguments out of its range, no scratch memory): the caller falls back to
    /// the float path.
    package func resample(pixels: [UInt8], width: Int, height: Int, channels: Int,
                  alpha: Resampler.AlphaHandling,
                  horizontal: WeightTable, vertical: WeightTable) -> [UInt8]? {
        precondition(pixels.count == width * height * channels, "pixel storage does not match the size")
        guard width <= Int(Int32.max), height <= Int(Int32.max),
              horizontal.count * horizontal.taps <= Int(Int32.max),
              vertical.count * vertical.taps <= Int(Int32.max) else { return nil }
        let hStarts = horizontal.starts.map { Int32(truncatingIfNeeded: $0) }
        let vStarts = vertical.starts.map { Int32(truncatingIfNeeded: $0) }
        let hWeights = horizontal.fixedPointWeights
        let vWeights = vertical.fixedPointWeights
        let alphaCode: Int32 = switch alpha {
        case .none: Int32(KILN_RESAMPLE_ALPHA_NONE)
        case .keepPremultiplied: Int32(KILN_RESAMPLE_ALPHA_KEEP_PREMULTIPLIED)
        case .premultiplyAround: Int32(KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND)
        }
        let outCount = horizontal.count * vertical.count * channels
        var status: Int32 = -1
        let output = [UInt8](unsafeUninitializedCapacity: outCount) { out, count in
            pixels.withUnsafeBufferPointer { src in
                hStarts.withUnsafeBufferPointer { hs in
                    hWeights.withUnsafeBufferPointer { hw in
                        vStarts.withUnsafeBufferPointer { vs in
                            vWeights.withUnsafeBufferPointer { vw in
                                var h = kiln_resample_axis(count: Int32(horizontal.count), taps: Int32(horizontal.taps),
                                                           starts: hs.baseAddress, weights: hw.baseAddress)
                                var v = kiln_resample_axis(count: Int32(vertical.count), taps: Int32(vertical.taps),
                                                           starts: vs.baseAddress, weights: vw.baseAddress)
                                status = kiln_resample_u8(src.baseAddress, Int32(width), Int32(height),
                                                          Int32(channels), alphaCode, &h, &v,
                                                          out.baseAddress, kernel.cPath)
                            }
                        }
                    }
                }
            }
            // On failure the bytes are never read; zero them so the array is initialised.
            if status < 0 { out.initialize(repeating: 0) }
            count = outCount
        }
        return status < 0 ? nil : output
    }
}
