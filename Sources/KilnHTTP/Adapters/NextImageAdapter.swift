/// Next.js's built-in image optimizer URLs, as its default loader writes them with
/// `images.path` pointed at Kiln: `/_next/image?url=%2Fphotos%2Fcat.jpg&w=640&q=75`.
///
/// - `url` (required): a local path or an absolute URL under a configured origin (`AdaptedSource`).
/// - `w` (required) → `w:<w>`: the width, never enlarged (Next.js's optimizer does not enlarge).
/// - `q` → `q:<q>` (Next.js 15's loader always writes it; without it Kiln's default quality).
/// - the format is negotiated from `Accept` as Next.js does: `f:auto`.
///
/// Any other parameter is a 400 naming it.
public struct NextImageAdapter: URLAdapter {
    public static let path = "/_next/image"
    public let name = "nextjs"
    public var origins: [AdapterOrigin]

    public init(origins: [AdapterOrigin] = []) {
        self.origins = origins
    }

    /// Next.js's parameters and the Kiln options each becomes (`AdapterParameter`); the format is
    /// `f:auto` always.
    public static let parameters: [AdapterParameter] = [
        .init("url", options: ["format"]),
        .init("w", options: ["width"]),
        .init("q", options: ["quality"]),
    ]

    public func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL? {
        guard path == NextImageAdapter.path else { return nil }
        let q = try QueryParameters(query ?? "", adapter: name)
        let unknown = q.unknown(NextImageAdapter.parameters.accepted)
        guard unknown.isEmpty else { throw AdapterError.unsupported(name, unknown) }
        guard let url = q["url"], !url.isEmpty else { throw AdapterError(name, "missing url=") }
        guard let w = q["w"] else { throw AdapterError(name, "missing w=") }
        var options = ["w:\(try AdaptedSource.integer(w, "w", 1...65_535, adapter: name))"]
        if let quality = q["q"] { options.append("q:\(try AdaptedSource.integer(quality, "q", 1...100, adapter: name))") }
        options.append("f:auto")
        let source = try AdaptedSource.resolve(url, origins: origins, adapter: name, what: "url")
        return AdaptedURL(adapter: name, options: options, sourcePath: source)
    }
}
