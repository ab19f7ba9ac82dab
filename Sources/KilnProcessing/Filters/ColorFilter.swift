import KilnModel

/// The colour filters of the URL, each an affine `ColorMatrix` over (r, g, b) in 0...255.
/// Alpha is never touched. `L = 0.2126 r + 0.7152 g + 0.0722 b` (Rec. 709 luma) throughout.
///
/// | filter | formula |
/// | --- | --- |
/// | `grayscale` | `r = g = b = L` |
/// | `sepia` | the classic matrix: `r = .393r + .769g + .189b`, `g = .349r + .686g + .168b`, `b = .272r + .534g + .131b` |
/// | `tint:<c>` | `L × c / 255` per channel (black stays black, white becomes `c`) |
/// | `brightness:<k>` | `v + 2.55 k` (−100 is black, 100 white) |
/// | `contrast:<k>` | `128 + f (v − 128)`, `f = 1 + k/100` for k ≤ 0 (−100 is flat grey), `f = 1 + 3k/100` above (100 is 4×) |
/// | `saturation:<k>` | `L + f (v − L)`, `f = 1 + k/100` (−100 is grey, 100 doubles the chroma) |
///
/// `k = 0` is the identity for the last three and returns the input unchanged.
public struct ColorFilter: ImageProcessing, Sendable, Hashable {
    public var matrix: ColorMatrix
    public var identifier: String

    public init(matrix: ColorMatrix, identifier: String) {
        self.matrix = matrix
        self.identifier = identifier
    }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        matrix.apply(to: image)
    }

    static let luma = ColorMatrix.luma

    public static let grayscale = ColorFilter(
        matrix: ColorMatrix(rows: [luma, luma, luma]), identifier: Operation.grayscale.identifier)

    public static let sepia = ColorFilter(
        matrix: ColorMatrix(rows: [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]),
        identifier: Operation.sepia.identifier)

    public static func tint(_ colour: RGBColor) -> ColorFilter {
        let c = colour.bytes.map { Float($0) / 255 }
        return ColorFilter(matrix: ColorMatrix(rows: c.map { k in luma.map { k * $0 } }),
                           identifier: Operation.tint(colour).identifier)
    }

    public static func brightness(_ k: Int) -> ColorFilter {
        let o = 2.55 * Float(k)
        return ColorFilter(matrix: ColorMatrix(rows: ColorMatrix.identity.rows, offset: [o, o, o]),
                           identifier: Operation.brightness(k).identifier)
    }

    public static func contrast(_ k: Int) -> ColorFilter {
        let f: Float = k <= 0 ? 1 + Float(k) / 100 : 1 + 3 * Float(k) / 100
        let o = 128 * (1 - f)
        return ColorFilter(matrix: ColorMatrix(rows: [[f, 0, 0], [0, f, 0], [0, 0, f]], offset: [o, o, o]),
                           identifier: Operation.contrast(k).identifier)
    }

    public static func saturation(_ k: Int) -> ColorFilter {
        let f = 1 + Float(k) / 100
        let rows = (0..<3).map { i in (0..<3).map { j in (1 - f) * luma[j] + (i == j ? f : 0) } }
        return ColorFilter(matrix: ColorMatrix(rows: rows), identifier: Operation.saturation(k).identifier)
    }
}
