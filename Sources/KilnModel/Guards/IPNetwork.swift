import Glibc

/// An IP network (an entry of `server.allowed_peers`, of `OriginAddressPolicy`): an IPv4 or IPv6
/// address (`10.0.0.5`, `::1`) or a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`). A single
/// address is a /32 (IPv4) or /128 (IPv6). Numeric only, like `server.listen`: nothing is resolved.
///
/// An IPv4 peer that reaches an IPv6 socket as `::ffff:10.0.0.5` is compared as `10.0.0.5`
/// (`kiln_peer_address` unmaps it), so IPv4 entries work whatever the listening socket's family.
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    /// The network's address, 4 or 16 bytes, with the bits after the prefix cleared.
    public let address: [UInt8]
    /// Leading bits that must match: 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// `10.0.0.0/8`, `10.0.0.5`, `::1`, `[::1]`, `fd00::/8`; nil for anything else (host names,
    /// a prefix beyond the family's bits). Bits after the prefix are ignored (`10.1.2.3/8` is
    /// `10.0.0.0/8`), as nginx's `allow` does.
    public init?(parsing raw: String) {
        let text = Substring(raw).trimmingSpacesAndTabs()
        var host = Substring(text)
        var prefix: Int?
        if let slash = text.firstIndex(of: "/") {
            host = text[..<slash]
            guard let p = Int(text[text.index(after: slash)...]), p >= 0 else { return nil }
            prefix = p
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard let bytes = IPNetwork.parseAddress(String(host)) else { return nil }
        let bits = bytes.count * 8
        let length = prefix ?? bits
        guard length <= bits else { return nil }
        address = IPNetwork.masked(bytes, prefixLength: length)
        prefixLength = length
    }

    /// The loopback networks (`127.0.0.0/8`, `::1`): the default of `server.allowed_peers`.
    public static let loopback: [IPNetwork] = [IPNetwork(parsing: "127.0.0.0/8")!, IPNetwork(parsing: "::1")!]

    /// Whether `peer` (4 or 16 bytes, as `kiln_peer_address` gives it) is inside this network.
    /// An IPv4 peer never matches an IPv6 network and the other way round.
    public func contains(_ peer: [UInt8]) -> Bool {
        guard peer.count == address.count else { return false }
        return IPNetwork.masked(peer, prefixLength: prefixLength) == address
    }

    public var description: String {
        let host = IPNetwork.format(address)
        return prefixLength == address.count * 8 ? host : "\(host)/\(prefixLength)"
    }

    /// A numeric IPv4 (4 bytes) or IPv6 (16 bytes) address; nil for anything else.
    public static func parseAddress(_ s: String) -> [UInt8]? {
        if s.contains(":") {
            var a = in6_addr()
            guard inet_pton(AF_INET6, s, &a) == 1 else { return nil }
            return withUnsafeBytes(of: &a) { Array($0) }
        }
        var a = in_addr()
        guard inet_pton(AF_INET, s, &a) == 1 else { return nil }
        return withUnsafeBytes(of: &a) { Array($0) }
    }

    /// `bytes` (4 or 16) written as an address (`10.0.0.5`, `::1`).
    public static func format(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard bytes.count == 4 || bytes.count == 16 else { return "?" }
        let ok = bytes.withUnsafeBytes { src in
            out.withUnsafeMutableBufferPointer { inet_ntop(family, src.baseAddress, $0.baseAddress, socklen_t($0.count)) != nil }
        }
        guard ok else { return "?" }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        var out = bytes
        for i in out.indices {
            let keep = prefixLength - i * 8
            if keep >= 8 { continue }
            out[i] = keep <= 0 ? 0 : out[i] & UInt8(truncatingIfNeeded: 0xff << (8 - keep))
        }
        return out
    }

    /// `10.0.0.0/8, ::1` (commas or spaces between entries) to networks; nil when an entry is not
    /// an address or network, or when there is none.
    public static func parseList(_ raw: String) -> [IPNetwork]? {
        let parts = raw.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        guard !parts.isEmpty else { return nil }
        var out: [IPNetwork] = []
        for part in parts {
            guard let n = IPNetwork(parsing: String(part)) else { return nil }
            out.append(n)
        }
        return out
    }

    public static func formatList(_ list: [IPNetwork]) -> String {
        list.map(\.description).joined(separator: ",")
    }
}
