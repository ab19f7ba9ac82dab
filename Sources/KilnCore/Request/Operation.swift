/// One processing step of a request, in URL order (Nuke's processors array).
///
/// Operations are plain data; `KilnProcessing` turns each into an `ImageProcessing` value.
public enum Operation: Sendable, Hashable {
    case resize(ResizeOptions)

    /// The canonical URL segment (`rs:300:200:fill`), part of the cache key.
    public var canonical: String {
        switch self {
        case .resize(let r): "rs:\(r.width):\(r.height):\(r.mode.rawValue)"
        }
    }
}
