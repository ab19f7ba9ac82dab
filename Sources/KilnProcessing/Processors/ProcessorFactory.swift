import KilnCore

/// Turns the request's `Operation` values (plain data, in URL order) into processors.
///
/// The one switch over `Operation`: a new URL operation adds a case in KilnCore and a line here.
public enum ProcessorFactory {
    /// The processor that carries out `operation`.
    public static func processor(for operation: Operation) -> any ImageProcessing {
        switch operation {
        case .resize(let options): Resize(options)
        default: NotYetImplemented(operation: operation)
        }
    }

    /// The processors for a request's operations, in order.
    public static func processors(for operations: [Operation]) -> [any ImageProcessing] {
        operations.map { processor(for: $0) }
    }
}

/// Placeholder until every operation has its processor: refuses with a 400-class error.
struct NotYetImplemented: ImageProcessing {
    var operation: Operation
    var identifier: String { operation.canonical }
    func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        throw .invalidArgument(option: operation.canonical, reason: "not implemented yet")
    }
}
