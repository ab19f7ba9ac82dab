/// What a processor knows about the image it is given.
public struct ProcessingContext: Sendable {
    /// The size, in source pixels, that the input stands for. Equal to the input's size except
    /// for the first processor after a decoder shrank on load: a resize plans on this size so the
    /// output is the same as after a full decode.
    public var logicalSize: PixelSize
    /// Largest output a processor may produce, in pixels.
    public var maxOutputPixels: Int

    public init(logicalSize: PixelSize, maxOutputPixels: Int = 50_000_000) {
        self.logicalSize = logicalSize
        self.maxOutputPixels = maxOutputPixels
    }
}

/// Why a processor refused (arguments that only fail against the actual image).
public enum ProcessingError: Error, Equatable, Sendable {
    /// Arguments that do not fit this image, e.g. a crop outside it. Names the option.
    case invalidArgument(option: String, reason: String)
    /// The result would be over a limit.
    case overLimit(String)
}

/// One step over pixels (Nuke's `ImageProcessing`). `identifier` goes into the cache key.
public protocol ImageProcessing {
    var identifier: String { get }
    func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer
}
