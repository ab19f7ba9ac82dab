import CDeflate
import KilnModel

/// The fast decode path for the common PNGs (issue 15): 8-bit RGB or RGBA, non-interlaced, no
/// tRNS, sRGB-encoded (no gAMA, an sRGB chunk, or gAMA 1/2.2: `PNGChunks.rowReadable`). For these
/// libpng's simplified API returns the stored samples unchanged, so Kiln can produce them itself:
/// the IDAT chunks are checked (CRC-32, as libpng does for critical chunks), joined, inflated in
/// one call by libdeflate into a buffer of exactly the expected size, and unfiltered in place
/// (`PNGUnfilter`).
///
/// Anything unusual returns nil and the caller decodes through libpng as before: a CRC mismatch,
/// a zlib stream that is corrupt or inflates to more or fewer bytes than the rows need, a filter
/// type above 4, IDAT chunks that are not back to back. libpng then reports the failure with the
/// same message (and the same `DecodeError.corrupt`) as before the fast path existed, and the
/// pixels of every file it accepts are the bytes libpng would give (`PNGFastDecodeTests`).
///
/// Measured on the op3 source (1920×1080 RGBA, 2.7 MB, Paeth rows; release build, thread CPU
/// time on the shared 2-core machine): libdeflate inflates it in 17 ms and the unfilter takes
/// 10 ms; libpng's whole `png_image_finish_read` (zlib inflate + SSE2 unfilter) took 75-80 ms.
///
/// The shrink-on-load path (`PNGShrinkOnLoad`) stays on libpng's row reader: libdeflate has no
/// streaming interface, and the point of shrink-on-load is never to hold the whole image.
package enum PNGFastDecode {
    /// True when `chunks` describe a file whose rows the fast path reproduces exactly.
    static func eligible(_ chunks: PNGChunks) -> Bool {
        guard let ihdr = chunks.ihdr, chunks.rowReadable, ihdr.bitDepth == 8, !ihdr.interlaced,
              ihdr.colorType == 2 || ihdr.colorType == 6, !chunks.hasTransparency,
              let idat = chunks.idatChunks, !idat.isEmpty,
              ihdr.width > 0, ihdr.height > 0 else { return false }
        return true
    }

    /// The decoded pixels (3 or 4 channels, as the header says), nil when the file is not
    /// eligible or anything in the image data does not check out (see above).
    package static func decode(_ bytes: UnsafeRawBufferPointer, chunks: PNGChunks) -> PixelBuffer? {
        guard eligible(chunks), let ihdr = chunks.ihdr, let idat = chunks.idatChunks else { return nil }
        let channels = ihdr.colorType == 6 ? 4 : 3
        let (rowBytes, overflowA) = ihdr.width.multipliedReportingOverflow(by: channels)
        let (filtered, overflowB) = (rowBytes + 1).multipliedReportingOverflow(by: ihdr.height)
        guard !overflowA, !overflowB, let base = bytes.baseAddress else { return nil }

        // The chunk ranges come from `PNGChunks.scan` over these same bytes: each lies inside them.
        var compressedCount = 0
        for chunk in idat {
            guard chunk.lowerBound >= 0, chunk.upperBound <= bytes.count, chunk.count >= 12 else { return nil }
            let stored = UInt32(bytes[chunk.upperBound - 4]) << 24 | UInt32(bytes[chunk.upperBound - 3]) << 16
                | UInt32(bytes[chunk.upperBound - 2]) << 8 | UInt32(bytes[chunk.upperBound - 1])
            let crc = libdeflate_crc32(0, base + chunk.lowerBound + 4, chunk.count - 8)   // type and data
            guard UInt32(crc) == stored else { return nil }
            compressedCount += chunk.count - 12
        }
        var joined: [UInt8] = []
        if idat.count > 1 {
            joined.reserveCapacity(compressedCount)
            for chunk in idat { joined.append(contentsOf: bytes[(chunk.lowerBound + 8) ..< (chunk.upperBound - 4)]) }
        }

        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var ok = false
        let pixels = [UInt8](unsafeUninitializedCapacity: filtered) { buffer, initialized in
            initialized = 0
            guard let out = buffer.baseAddress else { return }
            // A NULL actual-size pointer makes libdeflate fail unless the stream fills `filtered` exactly.
            let result: libdeflate_result
            if idat.count == 1 {
                result = libdeflate_zlib_decompress(decompressor, base + idat[0].lowerBound + 8, idat[0].count - 12,
                                                    out, filtered, nil)
            } else {
                result = joined.withUnsafeBytes { libdeflate_zlib_decompress(decompressor, $0.baseAddress, $0.count, out, filtered, nil) }
            }
            guard result == LIBDEFLATE_SUCCESS,
                  PNGUnfilter.unfilter(out, rowBytes: rowBytes, height: ihdr.height, bpp: channels) else { return }
            ok = true
            initialized = rowBytes * ihdr.height
        }
        guard ok else { return nil }
        return PixelBuffer(width: ihdr.width, height: ihdr.height, channels: channels, pixels: pixels)
    }
}
