/// An object store the shared result cache keeps its entries in: S3 or an S3-compatible store
/// (`S3ObjectClient`; SeaweedFS, MinIO, Ceph RGW...). Keys are relative to the store's bucket
/// and never start with `/`. Every call is synchronous and bounded in time by the client.
public protocol ObjectStoring: Sendable {
    /// The object at `key`, nil when there is none (404).
    func get(_ key: String) throws(ObjectStoreError) -> StoredObject?
    /// Writes `body` at `key` with its content type and user metadata (`x-amz-meta-<name>`;
    /// names are lower-case ASCII, values printable ASCII).
    func put(_ key: String, body: [UInt8], contentType: String, metadata: [String: String]) throws(ObjectStoreError)
    /// Every key that starts with `prefix` (all pages).
    func list(prefix: String) throws(ObjectStoreError) -> [String]
    /// Removes `keys` (missing ones are no error); how many were removed.
    @discardableResult func delete(_ keys: [String]) throws(ObjectStoreError) -> Int
}

/// One object as read from the store.
public struct StoredObject: Sendable, Equatable {
    public var body: [UInt8]
    public var contentType: String
    /// User metadata, names lower-cased without the `x-amz-meta-` prefix.
    public var metadata: [String: String]

    public init(body: [UInt8], contentType: String, metadata: [String: String]) {
        self.body = body
        self.contentType = contentType
        self.metadata = metadata
    }
}

/// Why a store call failed.
public enum ObjectStoreError: Error, Sendable, Equatable {
    /// Could not reach the store or it did not answer in time, or answered 5xx: the one-line reason.
    case unavailable(String)
    /// The store answered but refused (403, 400, a bad signature...): the one-line reason.
    case refused(String)

    public var message: String {
        switch self {
        case .unavailable(let m), .refused(let m): m
        }
    }
}
