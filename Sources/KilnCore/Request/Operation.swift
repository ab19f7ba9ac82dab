/// One processing step of a request, in URL order (Nuke's processors array).
///
/// Operations are plain data; `KilnProcessing` turns each into an `ImageProcessing` value.
public enum Operation: Sendable, Hashable {
    case resize(ResizeOptions)

    /// The canonical URL segment (`rs:300:200:fill`, `rs:800:0:fit/el:1` when upscaling is on),
    /// part of the cache key: everything that changes the pixels must be in it.
    public var canonical: String {
        switch self {
        case .resize(let r): "rs:\(r.width):\(r.height):\(r.mode.rawValue)" + (r.enlarge ? "/el:1" : "")
        }
    }
}
