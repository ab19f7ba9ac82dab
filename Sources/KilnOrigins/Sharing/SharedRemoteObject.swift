import KilnModel
import KilnPipeline

/// One version of a shared remote source: its identity, and its bytes when the open fetched them.
final class SharedRemoteObject: OpenedSource {
    let owner: SharedOriginSource
    let remote: RemoteSource
    let rest: String
    let path: String
    let identity: SourceIdentity
    private var body: [UInt8]?

    init(owner: SharedOriginSource, remote: RemoteSource, rest: String, path: String, identity: SourceIdentity, body: [UInt8]?) {
        self.owner = owner
        self.remote = remote
        self.rest = rest
        self.path = path
        self.identity = identity
        self.body = body
    }

    func readAll() throws(LoadError) -> [UInt8] {
        if let body { return body }
        let fetched = try owner.bytes(remote, rest, path, identity)
        body = fetched
        return fetched
    }
}
