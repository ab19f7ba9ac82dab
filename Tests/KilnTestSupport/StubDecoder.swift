import Foundation
import KilnModel
import KilnPipeline

/// The double of `ImageDecoding` (and, as the decoder of every format, of the pipeline's
/// `ImageDecoderProviding`): answers every file with a given image, or throws a given error, and
/// records what it was asked.
///
/// The header is the image's (size, alpha) in `format`, or `header` when set; `decode` hands out
/// `image` whatever the options (it does not shrink on load), or throws `error`. The records are
/// thread-safe.
public final class StubDecoder: ImageDecoding, ImageDecoderProviding, @unchecked Sendable {
    public var image: PixelBuffer
    public var format: ImageFormat
    /// The header to report instead of the image's.
    public var header: ImageHeader?
    /// Thrown by `decode` (the header still reads).
    public var error: DecodeError?

    private let lock = NSLock()
    private var headerCalls = 0
    private var decodeOptions: [DecodeOptions] = []
    private var askedFormats: [ImageFormat] = []

    public init(image: PixelBuffer, format: ImageFormat = .png, header: ImageHeader? = nil, error: DecodeError? = nil) {
        self.image = image
        self.format = format
        self.header = header
        self.error = error
    }

    /// A decoder that fails every decode with `error`.
    public convenience init(failingWith error: DecodeError, format: ImageFormat = .png) {
        self.init(image: PixelBuffer(width: 1, height: 1, channels: 3), format: format, error: error)
    }

    /// Calls of `readHeader`.
    public var headerReads: Int { lock.withLock { headerCalls } }
    /// The options of every `decode` call, in order.
    public var decodes: [DecodeOptions] { lock.withLock { decodeOptions } }
    /// The formats the pipeline asked a decoder for.
    public var formatsAsked: [ImageFormat] { lock.withLock { askedFormats } }

    public func decoder(for format: ImageFormat) -> any ImageDecoding {
        lock.withLock { askedFormats.append(format) }
        return self
    }

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        lock.withLock { headerCalls += 1 }
        return reportedHeader
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        lock.withLock { decodeOptions.append(options) }
        if let error { throw error }
        return DecodedImage(buffer: image, header: reportedHeader)
    }

    private var reportedHeader: ImageHeader {
        header ?? ImageHeader(format: format, width: image.width, height: image.height, hasAlpha: image.hasAlpha)
    }
}
