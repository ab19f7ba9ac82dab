/// The size a vector source (SVG) is rasterised at: vectors are resized before they are drawn,
/// never after, so the raster is what the request's leading resize would make of the drawing.
///
/// The leading resize is planned against the intrinsic size with enlargement allowed (a vector
/// loses nothing when drawn larger, as imgproxy does for SVG), and the raster is the scaled
/// drawing: for `fit` the output itself, for `fill` the drawing that covers the box (the resize
/// step then crops it at the gravity, resampling nothing), for `force` the stretched drawing.
/// Without a leading resize the drawing is rastered at its intrinsic size.
public enum VectorRaster {
    /// The raster size for a drawing of `intrinsic` CSS pixels under `request`.
    public static func size(intrinsicWidth: Double, intrinsicHeight: Double, request: ImageRequest) -> PixelSize {
        let w = max(intrinsicWidth, 1), h = max(intrinsicHeight, 1)
        guard var resize = request.leadingResize else {
            return PixelSize(width: clamp(w), height: clamp(h))
        }
        resize.enlarge = true
        resize = resize.resolved(for: PixelSize(width: clamp(w), height: clamp(h)))
        var scaleX: Double, scaleY: Double
        let fx = resize.width > 0 ? Double(resize.width) / w : nil
        let fy = resize.height > 0 ? Double(resize.height) / h : nil
        switch resize.mode {
        case .fit, .fill, .auto:
            let s: Double = switch (fx, fy) {
            case let (x?, y?): resize.mode == .fit ? min(x, y) : max(x, y)
            case let (x?, nil): x
            case let (nil, y?): y
            case (nil, nil): 1
            }
            scaleX = s
            scaleY = s
        case .force:
            scaleX = fx ?? fy ?? 1
            scaleY = fy ?? fx ?? 1
        }
        return PixelSize(width: clamp(w * scaleX), height: clamp(h * scaleY))
    }

    /// Rounded to whole pixels, at least 1, and at most what an `Int` pixel count can say (the
    /// decode limits refuse anything large long before).
    public static func clamp(_ v: Double) -> Int {
        guard v.isFinite else { return 1 }
        return Int(min(max(v.rounded(), 1), 1_000_000_000))
    }
}
