import KilnModel

/// One configured watermark, decoded once per process: premultiplied RGBA in sRGB, and the
/// digest of its file's bytes (its identity in the cache key).
public struct WatermarkImage: Sendable, Equatable {
    /// RGBA, premultiplied.
    public let pixels: PixelBuffer
    /// SHA-256 of the file's bytes, 64 lower-case hex digits.
    public let identity: String

    /// `decoded` (RGB or RGBA, straight or premultiplied) as premultiplied RGBA.
    public init(decoded: PixelBuffer, identity: String) {
        pixels = Alpha.premultiplied(Pad.withAlpha(decoded))
        self.identity = identity
    }
}

/// The configured watermarks by name (`[watermarks]`), shared by the processors that draw them
/// and the cache key that must change when one of them does.
public struct WatermarkLibrary: Sendable, Equatable {
    public var images: [String: WatermarkImage]

    public init(_ images: [String: WatermarkImage] = [:]) {
        self.images = images
    }

    public subscript(name: String) -> WatermarkImage? { images[name] }

    /// The part of the cache key that the request's watermarks add: `watermarks:<name>=<digest>`
    /// for each one it draws, sorted; empty for a request without any (its key stays as it was).
    /// The one place the watermarks' identity is derived.
    public func identity(for operations: [Operation]) -> String {
        var names = Set<String>()
        for case .watermark(let w) in operations { names.insert(w.name) }
        guard !names.isEmpty else { return "" }
        return "watermarks:" + names.sorted().map { "\($0)=\(images[$0]?.identity ?? "missing")" }.joined(separator: ",")
    }
}
