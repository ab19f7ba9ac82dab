/// The geometry of one resize: which part of the source goes into an output of which size.
///
/// Computed in the source's own pixel coordinates, so that a decoder that shrank the image on
/// load (JPEG DCT scaling) gives the same output size as a full decode: scale `sourceRect` by
/// the decoded size over the logical size.
public struct ResizePlan: Sendable, Hashable {
    /// The region of the source that is resampled (origin and size in source pixels).
    public var sourceX: Double
    public var sourceY: Double
    public var sourceWidth: Double
    public var sourceHeight: Double
    /// The size of the result.
    public var output: PixelSize

    public init(sourceX: Double, sourceY: Double, sourceWidth: Double, sourceHeight: Double, output: PixelSize) {
        self.sourceX = sourceX
        self.sourceY = sourceY
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.output = output
    }

    /// True when the plan copies the source unchanged.
    public func isIdentity(for source: PixelSize) -> Bool {
        output == source && sourceX == 0 && sourceY == 0
            && sourceWidth == Double(source.width) && sourceHeight == Double(source.height)
    }

    /// Plans `options` for a source of `source` pixels (already oriented as displayed).
    /// `anchor` overrides the gravity's anchor (fractions of the free space; for `smart`).
    public init(options asked: ResizeOptions, source: PixelSize, anchor: (x: Double, y: Double)? = nil) {
        let options = asked.resolved(for: source)
        let sw = Double(source.width), sh = Double(source.height)
        let tw = Double(options.width), th = Double(options.height)
        var scaleX: Double, scaleY: Double
        switch options.mode {
        case .fit, .fill, .auto:
            let fx = options.width > 0 ? tw / sw : nil
            let fy = options.height > 0 ? th / sh : nil
            var s: Double
            switch (fx, fy) {
            case let (x?, y?): s = options.mode == .fit ? min(x, y) : max(x, y)
            case let (x?, nil): s = x
            case let (nil, y?): s = y
            case (nil, nil): s = 1
            }
            if !options.enlarge { s = min(s, 1) }
            scaleX = s
            scaleY = s
        case .force:
            scaleX = options.width > 0 ? tw / sw : (options.height > 0 ? th / sh : 1)
            scaleY = options.height > 0 ? th / sh : (options.width > 0 ? tw / sw : 1)
            if !options.enlarge {
                scaleX = min(scaleX, 1)
                scaleY = min(scaleY, 1)
            }
        }
        let scaledW = max(1, Int((sw * scaleX).rounded()))
        let scaledH = max(1, Int((sh * scaleY).rounded()))
        var outW = scaledW, outH = scaledH
        if options.mode == .fill {
            if options.width > 0 { outW = min(options.width, scaledW) }
            if options.height > 0 { outH = min(options.height, scaledH) }
        }
        // The source region that maps onto the output: fill crops the overflow at the gravity
        // (`smart` is resolved by the processor, which passes the anchor it found).
        let regionW = sw * Double(outW) / Double(scaledW)
        let regionH = sh * Double(outH) / Double(scaledH)
        let a = anchor ?? options.gravity.anchor ?? (0.5, 0.5)
        let g = options.gravity
        self.init(sourceX: g.origin(extent: sw, window: regionW, anchor: a.x),
                  sourceY: g.origin(extent: sh, window: regionH, anchor: a.y),
                  sourceWidth: regionW, sourceHeight: regionH,
                  output: PixelSize(width: outW, height: outH))
    }
}
