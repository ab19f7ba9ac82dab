import KilnModel

/// The EXIF `Orientation` tag (0x0112): how the stored pixels must be transformed to display.
///
/// Raw values are the EXIF values 1...8. Each case names the transform that turns the stored
/// image into the displayed one: `rotate90` (EXIF 6) means the stored image must be rotated 90°
/// clockwise to be shown upright.
public enum Orientation: Int, Sendable, Hashable, CaseIterable {
    /// 1: stored as displayed.
    case identity = 1
    /// 2: mirror left and right.
    case flipHorizontal = 2
    /// 3: rotate 180°.
    case rotate180 = 3
    /// 4: mirror top and bottom.
    case flipVertical = 4
    /// 5: mirror across the main diagonal (mirror horizontally, then rotate 270° clockwise).
    case transpose = 5
    /// 6: rotate 90° clockwise.
    case rotate90 = 6
    /// 7: mirror across the anti-diagonal (mirror horizontally, then rotate 90° clockwise).
    case transverse = 7
    /// 8: rotate 90° counter-clockwise (270° clockwise).
    case rotate270 = 8

    /// The orientation for an EXIF tag value; values outside 1...8 (invalid or missing tags)
    /// are treated as 1, as browsers and libvips do.
    public init(exifValue: Int) {
        self = Orientation(rawValue: exifValue) ?? .identity
    }

    /// The EXIF tag value, 1...8.
    public var exifValue: Int { rawValue }

    /// True for 5...8: the displayed width is the stored height.
    public var swapsDimensions: Bool {
        switch self {
        case .transpose, .rotate90, .transverse, .rotate270: true
        case .identity, .flipHorizontal, .rotate180, .flipVertical: false
        }
    }

    /// The displayed size of a stored image of `stored` pixels.
    public func displaySize(of stored: PixelSize) -> PixelSize {
        swapsDimensions ? stored.transposed : stored
    }

    /// The transform that undoes this one (applying both gives the stored image back).
    public var inverse: Orientation {
        switch self {
        case .rotate90: .rotate270
        case .rotate270: .rotate90
        default: self
        }
    }

    /// The stored image turned upright. Returns `image` itself for `identity`.
    public func apply(to image: PixelBuffer) -> PixelBuffer {
        switch self {
        case .identity: image
        case .flipHorizontal: PixelTransform.flip(image, .horizontal)
        case .rotate180: PixelTransform.rotate(image, by: .degrees180)
        case .flipVertical: PixelTransform.flip(image, .vertical)
        case .transpose: PixelTransform.transpose(image)
        case .rotate90: PixelTransform.rotate(image, by: .degrees90)
        case .transverse: PixelTransform.transverse(image)
        case .rotate270: PixelTransform.rotate(image, by: .degrees270)
        }
    }
}
