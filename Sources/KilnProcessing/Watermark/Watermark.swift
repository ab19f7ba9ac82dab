import KilnModel

/// `watermark:<name>…` (`wm:`): blends a configured watermark onto the image
/// (`WatermarkCompositor`), resized first with Kiln's resampler when `scale` asks for a width
/// relative to the image's.
public struct Watermark: ImageProcessing, Sendable {
    public var options: WatermarkOptions
    /// The configured image; nil when the name is not configured in this process (a 400).
    public var mark: WatermarkImage?
    public var resampler: Resampler

    public init(_ options: WatermarkOptions, mark: WatermarkImage?, resampler: Resampler = Resampler()) {
        self.options = options
        self.mark = mark
        self.resampler = resampler
    }

    public var identifier: String { Operation.watermark(options).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard let mark else {
            throw .invalidArgument(option: "watermark", reason: "no watermark named \"\(options.name)\"")
        }
        guard options.opacity > 0, image.width > 0, image.height > 0 else { return image }
        let size = Watermark.drawnSize(of: mark.pixels.size, scale: options.scale, canvas: image.size)
        guard size.pixelCount <= context.maxOutputPixels else {
            throw .overLimit("the watermark scaled to \(size) is over the limit of \(context.maxOutputPixels) pixels")
        }
        let drawn = size == mark.pixels.size ? mark.pixels
            : resampler.resample(mark.pixels, plan: ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(mark.pixels.width),
                                                               sourceHeight: Double(mark.pixels.height), output: size))
        return WatermarkCompositor.composite(drawn, onto: image, position: options.position,
                                             x: options.x, y: options.y, opacity: options.opacity)
    }

    /// The size the watermark is drawn at: its own for `scale` 0, else `scale` of the canvas's
    /// width (at least 1 px) with the height in proportion.
    public static func drawnSize(of mark: PixelSize, scale: Double, canvas: PixelSize) -> PixelSize {
        guard scale > 0, mark.width > 0, mark.height > 0 else { return mark }
        let width = max(1, Int((scale * Double(canvas.width)).rounded()))
        let height = max(1, Int((Double(width) * Double(mark.height) / Double(mark.width)).rounded()))
        return PixelSize(width: width, height: height)
    }
}
