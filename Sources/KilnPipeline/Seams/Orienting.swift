import KilnModel

/// The orient stage: applies an EXIF orientation (1...8) to stored pixels. Default: `ExifOrienter`
/// (`KilnProcessing.Orientation`).
public protocol Orienting {
    func orient(_ image: PixelBuffer, exifOrientation: Int) -> PixelBuffer
}
