import Foundation
import KilnModel
import KilnPipeline

/// The double of `ImageEncoding` (and, as the encoder of every format, of the pipeline's
/// `ImageEncoderProviding`): records every image and options it was given, and answers with
/// `output` or throws `error`. `encodable` is what `canEncode` admits (what `f:auto` may pick).
/// The records are thread-safe.
public final class RecordingEncoder: ImageEncoding, ImageEncoderProviding, @unchecked Sendable {
    /// One `encode` call.
    public struct Call: Sendable {
        public var image: PixelBuffer
        public var options: EncodeOptions
    }

    /// The bytes every encode answers with.
    public var output: [UInt8]
    /// Thrown by every encode instead.
    public var error: EncodeError?
    /// The formats `canEncode` admits.
    public var encodable: Set<ImageFormat>

    private let lock = NSLock()
    private var recorded: [Call] = []

    public init(output: [UInt8] = Array("encoded".utf8), error: EncodeError? = nil,
                encodable: Set<ImageFormat> = Set(ImageFormat.allCases.filter(\.isEncodable))) {
        self.output = output
        self.error = error
        self.encodable = encodable
    }

    /// What was encoded, in order.
    public var calls: [Call] { lock.withLock { recorded } }

    public func encoder(for format: ImageFormat) -> any ImageEncoding { self }

    public func canEncode(_ format: ImageFormat) -> Bool { encodable.contains(format) }

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        lock.withLock { recorded.append(Call(image: image, options: options)) }
        if let error { throw error }
        return output
    }
}
