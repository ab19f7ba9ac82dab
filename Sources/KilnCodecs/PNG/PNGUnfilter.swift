import CKilnCodecShims

/// Reverses PNG's row filters (PNG specification, section 9: None, Sub, Up, Average, Paeth) for
/// the fast decode path (`PNGFastDecode`), in place.
///
/// This is one of the measured hot kernels that use explicit unsafe pointers (the package's rule:
/// bounds-checked Swift everywhere else). The caller owns a buffer of `height` rows of one filter
/// byte plus `rowBytes` filtered bytes and proves its size; the kernel compacts it to `height`
/// rows of `rowBytes` pixels at the front of the same buffer. Writing row y at `y * rowBytes`
/// while reading it from `y * (rowBytes + 1) + 1` is safe front to back: every write lands on
/// bytes already read.
///
/// Measured on the op3 source (1920×1080 RGBA, every row Paeth; release build, this 2-core
/// machine, thread CPU time of the kernel alone): a byte-at-a-time Paeth loop over pointers took
/// 25 ms (the predictor's branches mispredict); `paethVector`, one pixel per step in SIMD lanes,
/// takes 9-10 ms, and the whole fast decode (libdeflate 17 ms + unfilter) 27 ms against 75-80 ms
/// for libpng's `png_image_finish_read`. Two Paeth rows of RGBA in a row go to
/// `kiln_png_unpaeth4_pair` (CKilnCodecShims), which runs both rows' predictor chains in the same
/// SSE2 instructions: the kernel's share of a worker's op3 samples (perf, 5 s of wrk) went from
/// 26 % to 15 %, and op3 from 45.6 to 38.2 ms of CPU (medians of 4 interleaved runs each).
enum PNGUnfilter {
    /// Unfilters `height` rows in place; false when a row's filter type is not 0...4 (the caller
    /// then leaves the file to libpng, which reports it). `bpp`: bytes per complete pixel, 1...8.
    static func unfilter(_ data: UnsafeMutablePointer<UInt8>, rowBytes: Int, height: Int, bpp: Int) -> Bool {
        guard rowBytes > 0, height > 0, (1...8).contains(bpp) else { return false }
        let zeros = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes)
        zeros.initialize(repeating: 0, count: rowBytes)
        defer { zeros.deallocate() }
        let pairs = bpp == 4 && rowBytes >= 8 && height >= 2
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: pairs ? rowBytes : 0)
        defer { scratch.deallocate() }
        var y = 0
        while y < height {
            let src = data + y * (rowBytes + 1)
            let filter = src[0]
            let s = UnsafePointer(src + 1)
            let d = data + y * rowBytes
            let prev = y == 0 ? UnsafePointer(zeros) : UnsafePointer(d - rowBytes)
            defer { y += 1 }
            // Two Paeth rows of RGBA at once: the second row into `scratch`, then to its place.
            if pairs && filter == 4 && y + 1 < height, case let next = src + rowBytes + 1, next[0] == 4 {
                kiln_png_unpaeth4_pair(d, s, prev, scratch, UnsafePointer(next + 1), rowBytes)
                (d + rowBytes).update(from: scratch, count: rowBytes)
                y += 1
                continue
            }
            switch filter {
            case 0: d.update(from: s, count: rowBytes)   // may overlap forwards: memmove
            case 1: sub(d, s, rowBytes, bpp)
            case 2: up(d, s, prev, rowBytes)
            case 3: average(d, s, prev, rowBytes, bpp)
            case 4: if bpp == 3 || bpp == 4 { paethVector(d, s, prev, rowBytes, bpp) } else { paeth(d, s, prev, rowBytes, bpp) }
            default: return false
            }
        }
        return true
    }

    private static func sub(_ d: UnsafeMutablePointer<UInt8>, _ s: UnsafePointer<UInt8>, _ n: Int, _ bpp: Int) {
        for i in 0..<min(bpp, n) { d[i] = s[i] }
        var i = bpp
        while i < n {
            d[i] = s[i] &+ d[i - bpp]
            i += 1
        }
    }

    private static func up(_ d: UnsafeMutablePointer<UInt8>, _ s: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>, _ n: Int) {
        for i in 0..<n { d[i] = s[i] &+ prev[i] }
    }

    private static func average(_ d: UnsafeMutablePointer<UInt8>, _ s: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                                _ n: Int, _ bpp: Int) {
        for i in 0..<min(bpp, n) { d[i] = s[i] &+ prev[i] >> 1 }
        var i = bpp
        while i < n {
            d[i] = s[i] &+ UInt8(truncatingIfNeeded: (UInt16(d[i - bpp]) + UInt16(prev[i])) >> 1)
            i += 1
        }
    }

    /// The Paeth predictor without branches: a = left, b = up, c = upper left.
    @inline(__always)
    private static func predict(_ a: Int, _ b: Int, _ c: Int) -> Int {
        let p = b - c, q = a - c
        let pa = abs(p), pb = abs(q), pc = abs(p + q)
        let bc = pb <= pc ? b : c
        return pa <= pb && pa <= pc ? a : bc
    }

    private static func paeth(_ d: UnsafeMutablePointer<UInt8>, _ s: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                              _ n: Int, _ bpp: Int) {
        for i in 0..<min(bpp, n) { d[i] = s[i] &+ prev[i] }   // a = c = 0: the predictor is b
        var i = bpp
        while i < n {
            let pred = predict(Int(d[i - bpp]), Int(prev[i]), Int(prev[i - bpp]))
            d[i] = s[i] &+ UInt8(truncatingIfNeeded: pred)
            i += 1
        }
    }

    /// Paeth for 3 or 4 bytes per pixel (RGB, RGBA), one pixel per step in four SIMD lanes: the
    /// left and upper-left pixels stay in registers, and the predictor's choice is two lane-wise
    /// selects rather than data-dependent branches. For RGB the fourth lane carries the next
    /// pixel's first byte, whose result is overwritten by the next step (a store at `d + i`
    /// only reaches source bytes already loaded); the last RGB pixel, whose four-byte load would
    /// pass the end of the buffer, is done one byte at a time.
    private static func paethVector(_ d: UnsafeMutablePointer<UInt8>, _ s: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>,
                                    _ n: Int, _ bpp: Int) {
        guard n >= 4 else { return paeth(d, s, prev, n, bpp) }
        let sRaw = UnsafeRawPointer(s), pRaw = UnsafeRawPointer(prev), dRaw = UnsafeMutableRawPointer(d)
        func load(_ raw: UnsafeRawPointer, _ at: Int) -> SIMD4<Int16> {
            SIMD4<Int16>(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: at, as: SIMD4<UInt8>.self))
        }
        var c = load(pRaw, 0)
        var a = (load(sRaw, 0) &+ c) & 0xFF   // a = c = 0 for the first pixel: the predictor is b
        dRaw.storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: a), toByteOffset: 0, as: SIMD4<UInt8>.self)
        var i = bpp
        while i + 4 <= n {
            let b = load(pRaw, i)
            let p = b &- c, q = a &- c, r = p &+ q
            let pa = p.replacing(with: 0 &- p, where: p .< 0)
            let pb = q.replacing(with: 0 &- q, where: q .< 0)
            let pc = r.replacing(with: 0 &- r, where: r .< 0)
            let pred = c.replacing(with: b, where: pb .<= pc).replacing(with: a, where: (pa .<= pb) .& (pa .<= pc))
            a = (load(sRaw, i) &+ pred) & 0xFF
            dRaw.storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: a), toByteOffset: i, as: SIMD4<UInt8>.self)
            c = b
            i += bpp
        }
        while i < n {
            d[i] = s[i] &+ UInt8(truncatingIfNeeded: predict(Int(d[i - bpp]), Int(prev[i]), Int(prev[i - bpp])))
            i += 1
        }
    }
}
