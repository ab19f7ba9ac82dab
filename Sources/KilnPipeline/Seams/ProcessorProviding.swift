import KilnModel

/// The process stage: the processor that carries out one URL operation. Default:
/// `ProcessorFactory` (the processors of `KilnProcessing` and the build's custom ones).
public protocol ProcessorProviding {
    func processor(for operation: Operation) -> any ImageProcessing
}
