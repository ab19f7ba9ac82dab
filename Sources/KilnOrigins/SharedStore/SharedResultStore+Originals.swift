import KilnModel
import KilnPipeline

/// Originals of remote sources in the store (`SharedOriginSource` asks before its first fetch of
/// a source, and hands every whole download over): one object per source,
/// `<prefix><SourceTag.hex>/original`, beside the source's variants (a purge removes it with
/// them), replaced by the next download of a newer version.
///
/// | metadata | value |
/// | --- | --- |
/// | `kiln-kind` | `original` |
/// | `kiln-version` | `CacheKey.formatVersion` |
/// | `kiln-tag` | `SourceTag.hex` of the source path |
/// | `kiln-sha256`, `kiln-length` | of the body |
/// | `kiln-size`, `kiln-mtime-ns`, `kiln-validator` | the version's `SourceIdentity` |
/// | `kiln-etag`, `kiln-last-modified` | the origin's validators, when it sent them |
/// | `kiln-checked-at` | when the origin last confirmed the version (ms) |
///
/// A read is verified like a result's (length, SHA-256, tag, version, the identity's size); a
/// mismatch is discarded and the origin asked instead. Validators that are not short printable
/// ASCII (S3 metadata cannot carry them) keep the original out of the store.
extension SharedResultStore {
    /// The object key of `sourcePath`'s original.
    public func originalKey(_ sourcePath: String) -> String {
        sourcePrefix(sourcePath) + "original"
    }

    /// The stored original of `sourcePath`, nil when there is none, the store is skipped or
    /// failed (the breaker), or the object does not verify.
    public func original(sourcePath: String) -> SharedOriginal? {
        guard breaker.isClosed else { return nil }
        let object: StoredObject?
        do {
            object = try reader.get(originalKey(sourcePath))
        } catch {
            breaker.failed("a lookup", error.message)
            return nil
        }
        breaker.succeeded()
        guard let object else { return nil }
        if let refusal = signer?.refusal(objectKey: originalKey(sourcePath), metadata: object.metadata) {
            breaker.warn("discarded", "shared result store (cache.shared): discarded \(originalKey(sourcePath)) (\(sourcePath)): "
                + "\(refusal); fetching from the origin")
            return nil
        }
        let m = object.metadata
        guard m["kiln-kind"] == "original", m["kiln-version"] == String(CacheKey.formatVersion),
              m["kiln-tag"] == SourceTag(sourcePath: sourcePath).hex,
              m["kiln-length"].flatMap({ Int($0) }) == object.body.count,
              m["kiln-sha256"] == Digest.sha256Hex(object.body),
              let size = m["kiln-size"].flatMap({ Int($0) }), size == object.body.count,
              let mtime = m["kiln-mtime-ns"].flatMap({ Int64($0) }),
              let checkedAt = m["kiln-checked-at"].flatMap({ Int64($0) }) else {
            breaker.warn("discarded", "shared result store (cache.shared): discarded \(originalKey(sourcePath)) (\(sourcePath)): "
                + "its metadata do not match its body; fetching from the origin")
            return nil
        }
        let identity = SourceIdentity(size: size, mtimeNanoseconds: mtime, inode: 0, validator: m["kiln-validator"] ?? "")
        return SharedOriginal(body: object.body, identity: identity, etag: m["kiln-etag"], lastModified: m["kiln-last-modified"],
                              checkedAt: checkedAt)
    }

    /// Queues `original` of `sourcePath` for the next `flush()` (after the response).
    public func enqueueOriginal(_ original: SharedOriginal, sourcePath: String) {
        guard original.body.count <= maxBytes,
              [original.etag, original.lastModified, original.identity.validator].allSatisfy({ SharedResultStore.storable($0) })
        else { return }
        pendingOriginals = [(sourcePath, original)]
    }

    /// Writes the queued original, if any.
    func flushOriginals() -> [SharedWrite] {
        let queued = pendingOriginals
        pendingOriginals.removeAll()
        return queued.map { sourcePath, original in
            guard breaker.writable else { return .skipped }
            var metadata = [
                "kiln-kind": "original",
                "kiln-version": String(CacheKey.formatVersion),
                "kiln-tag": SourceTag(sourcePath: sourcePath).hex,
                "kiln-sha256": Digest.sha256Hex(original.body),
                "kiln-length": String(original.body.count),
                "kiln-size": String(original.identity.size),
                "kiln-mtime-ns": String(original.identity.mtimeNanoseconds),
                "kiln-checked-at": String(original.checkedAt),
            ]
            if !original.identity.validator.isEmpty { metadata["kiln-validator"] = original.identity.validator }
            if let etag = original.etag { metadata["kiln-etag"] = etag }
            if let modified = original.lastModified { metadata["kiln-last-modified"] = modified }
            do throws(ObjectStoreError) {
                let key = originalKey(sourcePath)
                try writer.put(key, body: original.body, contentType: "application/octet-stream",
                               metadata: signer?.signed(objectKey: key, metadata: metadata) ?? metadata)
                return .written(original.body.count)
            } catch {
                breaker.failed("a write", error.message)
                return .failed(error.message)
            }
        }
    }

    /// Whether `value` can be an S3 metadata value as it is: absent, or 1–256 printable ASCII bytes.
    static func storable(_ value: String?) -> Bool {
        guard let value, !value.isEmpty else { return true }
        return value.utf8.count <= 256 && value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
    }
}
