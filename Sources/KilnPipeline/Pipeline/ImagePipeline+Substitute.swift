import KilnModel

/// An image file rendered in place of a request's source (the HTTP layer's fallback images):
/// the operator's file, named in the configuration, read from its own folder (never from the
/// root, never from a URL).
public struct SubstituteImage: Sendable, Equatable {
    /// A short name (`not_found`): part of the substitute's cache key.
    public var name: String
    /// The file's path, absolute or relative to the working directory.
    public var path: String

    public init(name: String, path: String) {
        self.name = name
        self.path = path
    }

    /// The source path the substitute's renders are keyed under: a path no URL parses to (the
    /// parser never gives a leading `/`), so a substitute's cache entry is never a real
    /// variant's, and a real variant's never the substitute's.
    public var keyPath: String { "/substitute/" + name }

    /// The file's folder and base name.
    var folderAndName: (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }
}

extension ImagePipeline {
    /// `request` rendered with `substitute` as its source: the same options (a 300×200 request
    /// gets a 300×200 image), cached under a key of its own (the substitute's `keyPath`, the
    /// file's identity and the options), so repeated requests are cheap and the real variant's
    /// entry is never touched. Failures are the substitute's own, as `PipelineFailure`.
    public func image(for request: ImageRequest, accepted: FormatNegotiation,
                      substitute: SubstituteImage) throws(PipelineFailure) -> PipelineResult {
        defer { reportOriginFetches() }
        try observer?.enter(.cache)
        let opened: any OpenedSource
        do {
            opened = try open(substitute)
        } catch {
            throw PipelineFailure(error)
        }
        var substituted = request
        substituted.sourcePath = substitute.keyPath
        return try image(for: substituted, opened: opened, accepted: accepted, timeline: Timeline())
    }

    /// Checks that `substitute` can be read and decoded (at start, so that a missing or broken
    /// file is a configuration error, not a surprise at the first miss): renders a small
    /// thumbnail of it without the caches. Throws what the render throws.
    public func check(_ substitute: SubstituteImage) throws {
        let opened = try open(substitute)
        let probe = ImageRequest(sourcePath: substitute.keyPath, operations: [.resize(ResizeOptions(width: 16, height: 16))],
                                 output: OutputOptions(format: .format(.png)))
        _ = try render(probe, from: opened)
    }

    func open(_ substitute: SubstituteImage) throws(LoadError) -> any OpenedSource {
        let (folder, name) = substitute.folderAndName
        return try FileSource(root: folder, maxFileBytes: limits.maxFileBytes).open(name)
    }
}
