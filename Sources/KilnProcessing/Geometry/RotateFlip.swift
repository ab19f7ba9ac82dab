import KilnModel

/// `rotate:<90|180|270>` (`rot`): a clockwise rotation, lossless (`PixelTransform.rotate`).
public struct Rotate: ImageProcessing, Sendable, Hashable {
    public var rotation: Rotation

    public init(_ rotation: Rotation) {
        self.rotation = rotation
    }

    public var identifier: String { Operation.rotate(degrees: rotation.rawValue).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        PixelTransform.rotate(image, by: rotation)
    }
}

/// `flip:<h|v|hv>`: mirrors left-right (`h`), top-bottom (`v`) or both (`hv`, a 180° rotation).
public struct Flip: ImageProcessing, Sendable, Hashable {
    public var direction: KilnModel.FlipDirection

    public init(_ direction: KilnModel.FlipDirection) {
        self.direction = direction
    }

    public var identifier: String { Operation.flip(direction).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        switch direction {
        case .horizontal: PixelTransform.flip(image, .horizontal)
        case .vertical: PixelTransform.flip(image, .vertical)
        case .both: PixelTransform.rotate(image, by: .degrees180)
        }
    }
}
