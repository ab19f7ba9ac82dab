/// Progressive JPEG thumbnails below the Huffman floor: the scans a scaled (M/8 < 1) decode
/// does not read are dropped before libjpeg-turbo sees the stream, so their entropy-coded data are
/// never decoded. The reduced stream decodes to exactly the pixels of the whole one.
///
/// Which coefficients a scaled decode reads, per component (libjpeg-turbo 2.1):
/// - Its IDCT size: `jpeg_calc_output_dimensions` (jdmaster.c) gives every component the scaled
///   size ceil(8·M/8) and doubles a subsampled component's while its sampling ratio allows
///   (4:2:0 chroma at 1/8 is decoded with a 2×2 IDCT, at 1/2 with a full 8×8 one).
/// - What that IDCT reads: 1×1 only DC; the reduced 2×2 and 4×4 IDCTs (jidctred.c and their SIMD
///   twins) read rows and columns {0,1,3,5,7} and {0,1,2,3,5,6,7} of the 8×8 block, not its
///   top-left corner; the other sizes are taken as reading everything.
///
/// Which scans that keeps:
/// - every scan whose band (Ss...Se) meets a needed coefficient of one of its components,
///   refinement scans (Ah > 0) included: they carry correction bits for their whole band;
/// - every earlier scan sharing a (component, coefficient) with a kept scan, so that each kept
///   scan meets exactly the coefficient state (and progression checks) it meets in the whole file;
/// - for each component, the first scan carrying any of AC coefficients 1...9 when none is kept
///   otherwise: block smoothing (jdcoefct.c) re-estimates a component's DC from its neighbours
///   when it has no AC data at all, which would change even a 1/8 decode.
/// Smoothing may estimate the coefficients the dropped scans held; the IDCT does not read them.
///
/// Only SOF2 files; anything `JPEGScanLayout` doubts, more than 500 scans (left to TurboJPEG to
/// refuse) or nothing to drop gives nil: the caller decodes the stream as it is.
enum ProgressiveScanPruner {
    /// The reduced stream for a decode at `factor` (num/denom, as `TurboJPEGHandle.factor`),
    /// nil when the whole stream should be decoded.
    static func prune(_ data: UnsafeRawBufferPointer, factor: (num: Int, denom: Int)) -> [UInt8]? {
        guard factor.num > 0, factor.denom > 0, factor.num < factor.denom,
              let layout = JPEGScanLayout.parse(data) else { return nil }
        let needs = neededCoefficients(layout.components, factor: factor)
        let keep = keptScans(layout, needs: needs)
        guard keep.contains(false) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(layout.end)
        var copied = 0
        for (scan, kept) in zip(layout.scans, keep) where !kept {
            output.append(contentsOf: data[copied ..< scan.bytes.lowerBound])
            copied = scan.bytes.upperBound
        }
        output.append(contentsOf: data[copied ..< layout.end])
        return output
    }

    /// Per component, the zigzag indices of the coefficients the scaled IDCT reads, as bits.
    static func neededCoefficients(_ components: [JPEGScanLayout.Component], factor: (num: Int, denom: Int)) -> [UInt64] {
        let minimum = max(1, min(16, (8 * factor.num + factor.denom - 1) / factor.denom))
        let maxH = components.map(\.h).max() ?? 1, maxV = components.map(\.v).max() ?? 1
        return components.map { component in
            var size = minimum
            while size < 8 && (maxH * minimum) % (component.h * size * 2) == 0
                    && (maxV * minimum) % (component.v * size * 2) == 0 {
                size *= 2
            }
            return readMask(idctSize: size)
        }
    }

    /// The coefficients an IDCT of `idctSize` reads.
    static func readMask(idctSize: Int) -> UInt64 {
        let lines: Set<Int>
        switch idctSize {
        case 1: lines = [0]
        case 2: lines = [0, 1, 3, 5, 7]
        case 4: lines = [0, 1, 2, 3, 5, 6, 7]
        default: return ~0
        }
        var mask: UInt64 = 0
        for (zigzag, natural) in naturalOrder.enumerated() where lines.contains(natural / 8) && lines.contains(natural % 8) {
            mask |= UInt64(1) << UInt64(zigzag)
        }
        return mask
    }

    /// AC coefficients 1...9 (zigzag): the ones block smoothing looks at.
    private static let smoothedAC: UInt64 = 0x3FE

    /// Which scans stay (see the type's documentation).
    static func keptScans(_ layout: JPEGScanLayout, needs: [UInt64]) -> [Bool] {
        var forced = Set<Int>()
        while true {
            let keep = closure(layout.scans, needs: needs, forced: forced)
            var added = false
            for component in layout.components.indices {
                func carriesAC(_ index: Int) -> Bool {
                    let scan = layout.scans[index]
                    return scan.components.contains(component) && scan.band & smoothedAC != 0
                }
                guard !layout.scans.indices.contains(where: { keep[$0] && carriesAC($0) }),
                      let first = layout.scans.indices.first(where: carriesAC) else { continue }
                forced.insert(first)
                added = true
            }
            if !added { return keep }
        }
    }

    /// The scans meeting `needs` or `forced`, and every earlier scan sharing a coefficient with one kept.
    private static func closure(_ scans: [JPEGScanLayout.Scan], needs: [UInt64], forced: Set<Int>) -> [Bool] {
        var required = needs
        var keep = [Bool](repeating: false, count: scans.count)
        for index in scans.indices.reversed() {
            let scan = scans[index]
            guard forced.contains(index) || scan.components.contains(where: { required[$0] & scan.band != 0 }) else { continue }
            keep[index] = true
            for component in scan.components { required[component] |= scan.band }
        }
        return keep
    }

    /// Zigzag index → natural (row-major) index in the 8×8 block (jpeg_natural_order).
    static let naturalOrder: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ]
}
