import Crypto

/// SHA-256 helpers: cache keys and ETags are digests of explicit strings and bytes, never `hashValue`.
public enum Digest {
    public static func sha256Hex(_ bytes: some Sequence<UInt8>) -> String {
        hex(SHA256.hash(data: Array(bytes)))
    }

    public static func sha256Hex(_ text: String) -> String {
        sha256Hex(Array(text.utf8))
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        Hex.lowercase(digest)
    }
}
