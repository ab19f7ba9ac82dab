import Foundation
import KilnModel
import KilnPipeline

/// The double of `ImageProcessing` (and, as the processor of every operation, of the pipeline's
/// `ProcessorProviding`): records the operations it stood for and what each `process` call got,
/// and answers with its input unchanged, with `output`, or by throwing `error`. The records are
/// thread-safe.
public final class RecordingProcessor: ImageProcessing, ProcessorProviding, @unchecked Sendable {
    /// One `process` call.
    public struct Call: Sendable {
        public var image: PixelBuffer
        public var context: ProcessingContext
    }

    public let identifier: String
    /// The image every call answers with; nil hands the input back.
    public var output: PixelBuffer?
    /// Thrown by every call instead.
    public var error: ProcessingError?

    private let lock = NSLock()
    private var askedOperations: [KilnModel.Operation] = []
    private var recorded: [Call] = []

    public init(identifier: String = "recording", output: PixelBuffer? = nil, error: ProcessingError? = nil) {
        self.identifier = identifier
        self.output = output
        self.error = error
    }

    /// The operations the pipeline asked a processor for, in order.
    public var operations: [KilnModel.Operation] { lock.withLock { askedOperations } }
    /// What was processed, in order.
    public var calls: [Call] { lock.withLock { recorded } }

    public func processor(for operation: KilnModel.Operation) -> any ImageProcessing {
        lock.withLock { askedOperations.append(operation) }
        return self
    }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        lock.withLock { recorded.append(Call(image: image, context: context)) }
        if let error { throw error }
        return output ?? image
    }
}
