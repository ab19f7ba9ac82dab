import KilnModel

/// A cache of rendered results in the memory of one process (Nuke's `ImageCaching`).
/// `MemoryCache` is the default.
public protocol ImageCaching: AnyObject {
    /// Reading counts as a use; assigning nil removes.
    subscript(key: CacheKey) -> CachedImage? { get set }
    func removeAll()
    /// Removes the entries `shouldRemove` picks (a purge of some sources); how many.
    func removeAll(where shouldRemove: (CachedImage) -> Bool) -> Int
}
