import KilnModel
import KilnPipeline

/// The source stage when origins are configured: a path whose first segment names an origin
/// (`origin-a/cat.jpg`) is read from that `RemoteSource` (as `cat.jpg`), every other path from
/// the local folder. Without origins the pipeline uses `FileSource` alone.
public struct SourceRouter: SourceLoading {
    public let local: any SourceLoading
    public let remotes: [String: RemoteSource]

    public init(local: any SourceLoading, remotes: [RemoteSource]) {
        self.local = local
        self.remotes = Dictionary(remotes.map { ($0.origin.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The remote source and its path for `path`, nil for a local path.
    func route(_ path: String) -> (RemoteSource, String)? {
        guard let slash = path.firstIndex(of: "/"), let remote = remotes[String(path[..<slash])] else { return nil }
        return (remote, String(path[path.index(after: slash)...]))
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        if let (remote, rest) = route(path) { return try remote.identity(of: rest) }
        return try local.identity(of: path)
    }

    public func isLocal(_ path: String) -> Bool { route(path) == nil }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        if let (remote, rest) = route(path) { return try remote.open(rest) }
        return try local.open(path)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        if let (remote, rest) = route(path) {
            var image = try remote.load(rest)
            image.path = path
            return image
        }
        return try local.load(path)
    }
}
