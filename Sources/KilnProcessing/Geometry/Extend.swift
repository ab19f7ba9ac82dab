import KilnModel

/// `extend:<w>:<h>[:<gravity>]`: grows the canvas to at least `w`×`h`, the image placed at the
/// gravity, by padding (`Pad`) what each side lacks; an image already that large is unchanged.
/// After a resize it makes every answer the box itself (imgproxy's `extend`), whatever the
/// source's aspect ratio or size.
public struct Extend: ImageProcessing, Sendable, Hashable {
    public var options: ExtendOptions

    public init(_ options: ExtendOptions) {
        self.options = options
    }

    public var identifier: String { Operation.extend(options).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard options.width >= 0, options.height >= 0 else {
            throw .invalidArgument(option: "extend", reason: "width and height must not be negative")
        }
        return try Pad(options.padding(for: image.size)).process(image, context: context)
    }
}
