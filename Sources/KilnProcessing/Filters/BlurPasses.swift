/// The one-dimensional passes of the separable blurs, over `FloatImage` samples.
///
/// Edges replicate the outermost pixel (clamp-to-edge), so a flat image stays flat and the mean
/// of the image is kept up to edge effects. Horizontal passes work on one padded row at a time;
/// vertical passes walk the rows top to bottom and combine whole rows, so every loop reads
/// memory sequentially and vectorises.
enum BlurPasses {
    /// Convolves every row with `weights` (odd count, centred); `src` and `dst` may not alias.
    static func horizontalKernel(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>,
                                 width: Int, height: Int, channels: Int, weights: [Float]) {
        let radius = weights.count / 2
        let rowLength = width * channels
        withPaddedRow(width: width, channels: channels, padLeft: radius, padRight: radius) { pad in
            weights.withUnsafeBufferPointer { w in
                for y in 0..<height {
                    fillPadded(pad, from: src + y * rowLength, width: width, channels: channels,
                               padLeft: radius, padRight: radius)
                    let out = dst + y * rowLength
                    let w0 = w[0]
                    for j in 0..<rowLength { out[j] = w0 * pad[j] }
                    for k in 1..<w.count {
                        let wk = w[k], p = pad + k * channels
                        for j in 0..<rowLength { out[j] += wk * p[j] }
                    }
                }
            }
        }
    }

    /// Convolves every column with `weights` (odd count, centred); `src` and `dst` may not alias.
    static func verticalKernel(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>,
                               width: Int, height: Int, channels: Int, weights: [Float]) {
        let radius = weights.count / 2
        let rowLength = width * channels
        weights.withUnsafeBufferPointer { w in
            for y in 0..<height {
                let out = dst + y * rowLength
                let first = src + min(max(y - radius, 0), height - 1) * rowLength
                let w0 = w[0]
                for j in 0..<rowLength { out[j] = w0 * first[j] }
                for k in 1..<w.count {
                    let wk = w[k], row = src + min(max(y - radius + k, 0), height - 1) * rowLength
                    for j in 0..<rowLength { out[j] += wk * row[j] }
                }
            }
        }
    }

    /// A moving average of `2 * radius + 1` pixels along every row (running sum: O(1) per pixel).
    /// `channels` is 3 or 4.
    static func horizontalBox(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>,
                              width: Int, height: Int, channels: Int, radius: Int) {
        let rowLength = width * channels
        let scale = 1 / Float(2 * radius + 1)
        // One extra pixel on the right: the sum slides in pad[i + 2r + 1] after output i.
        withPaddedRow(width: width, channels: channels, padLeft: radius, padRight: radius + 1) { pad in
            let span = (2 * radius + 1) * channels
            for y in 0..<height {
                fillPadded(pad, from: src + y * rowLength, width: width, channels: channels,
                           padLeft: radius, padRight: radius + 1)
                let out = dst + y * rowLength
                // All channels of a pixel in one step: three or four independent running sums
                // keep the adder busy (a single chain would wait on each addition).
                var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
                var j = 0
                while j < span {
                    s0 += pad[j]; s1 += pad[j + 1]; s2 += pad[j + 2]
                    if channels == 4 { s3 += pad[j + 3] }
                    j += channels
                }
                var i = 0
                while i < rowLength {
                    out[i] = s0 * scale; out[i + 1] = s1 * scale; out[i + 2] = s2 * scale
                    s0 += pad[i + span] - pad[i]
                    s1 += pad[i + span + 1] - pad[i + 1]
                    s2 += pad[i + span + 2] - pad[i + 2]
                    if channels == 4 {
                        out[i + 3] = s3 * scale
                        s3 += pad[i + span + 3] - pad[i + 3]
                    }
                    i += channels
                }
            }
        }
    }

    /// A moving average of `2 * radius + 1` rows (a running sum of whole rows).
    static func verticalBox(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>,
                            width: Int, height: Int, channels: Int, radius: Int) {
        let rowLength = width * channels
        let scale = 1 / Float(2 * radius + 1)
        let sum = UnsafeMutablePointer<Float>.allocate(capacity: rowLength)
        defer { sum.deallocate() }
        func row(_ y: Int) -> UnsafePointer<Float> { src + min(max(y, 0), height - 1) * rowLength }
        sum.initialize(repeating: 0, count: rowLength)
        for y in -radius...radius {
            let r = row(y)
            for j in 0..<rowLength { sum[j] += r[j] }
        }
        for y in 0..<height {
            let out = dst + y * rowLength
            let add = row(y + radius + 1), drop = row(y - radius)
            for j in 0..<rowLength {
                out[j] = sum[j] * scale
                sum[j] += add[j] - drop[j]
            }
        }
    }

    /// Runs `body` with a scratch row of `width + padLeft + padRight` pixels.
    private static func withPaddedRow(width: Int, channels: Int, padLeft: Int, padRight: Int,
                                      _ body: (UnsafeMutablePointer<Float>) -> Void) {
        let count = (width + padLeft + padRight) * channels
        let pad = UnsafeMutablePointer<Float>.allocate(capacity: count)
        defer { pad.deallocate() }
        pad.initialize(repeating: 0, count: count)
        body(pad)
    }

    /// Copies a row into the middle of `pad` and repeats its first and last pixels outward.
    @inline(__always)
    private static func fillPadded(_ pad: UnsafeMutablePointer<Float>, from row: UnsafePointer<Float>,
                                   width: Int, channels: Int, padLeft: Int, padRight: Int) {
        let rowLength = width * channels
        (pad + padLeft * channels).update(from: row, count: rowLength)
        let last = row + rowLength - channels
        for p in 0..<padLeft {
            for c in 0..<channels { pad[p * channels + c] = row[c] }
        }
        let right = pad + (padLeft + width) * channels
        for p in 0..<padRight {
            for c in 0..<channels { right[p * channels + c] = last[c] }
        }
    }
}
