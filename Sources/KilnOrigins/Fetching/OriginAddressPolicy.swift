import KilnModel
/// Which addresses Kiln may connect to when it fetches a source from an origin (the SSRF guard):
/// every globally routable address, plus the networks an operator allows explicitly
/// (`source.allowed_networks`). Checked on the address of every connection, after DNS and after
/// each redirect, so a host name that resolves to 127.0.0.1 or a redirect to 10.0.0.5 is refused
/// like the literal address.
///
/// Refused unless allowed: loopback, "this network", private (RFC 1918), CGNAT (100.64/10),
/// link-local, benchmarking, documentation, IETF protocol assignments, multicast, reserved and
/// broadcast (IPv4); unspecified, loopback, unique local, link-local, site-local, multicast,
/// documentation, discard-only, Teredo and ORCHIDs (IPv6). IPv6 forms that carry an IPv4 address
/// (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and its
/// local-use `64:ff9b:1::/48`, 6to4 `2002::/16`) are judged by that IPv4 address as well: imgproxy's
/// SSRF fixes (CVE-2023-30019 and the bypasses after it) are the list of what must not slip through.
public struct OriginAddressPolicy: Sendable, Equatable {
    /// Networks allowed although special (e.g. `127.0.0.1` for tests, `10.0.0.0/8` for an origin
    /// on the private network).
    public var allowedNetworks: [IPNetwork]

    public init(allowedNetworks: [IPNetwork] = []) {
        self.allowedNetworks = allowedNetworks
    }

    /// nil when Kiln may connect to `address` (4 or 16 bytes), else why not, e.g.
    /// `127.0.0.1 is loopback`.
    public func refusal(for address: [UInt8]) -> String? {
        guard address.count == 4 || address.count == 16 else { return "\(address.count)-byte address" }
        let embedded = address.count == 16 ? OriginAddressPolicy.embeddedIPv4(address) : nil
        if isAllowed(address) { return nil }
        if let embedded, isAllowed(embedded) { return nil }
        let text = IPNetwork.format(address)
        if let range = OriginAddressPolicy.specialRange(of: address) { return "\(text) is \(range)" }
        if let embedded, let range = OriginAddressPolicy.specialRange(of: embedded) {
            return "\(text) carries \(IPNetwork.format(embedded)), which is \(range)"
        }
        return nil
    }

    private func isAllowed(_ address: [UInt8]) -> Bool {
        allowedNetworks.contains { $0.contains(address) }
    }

    /// The special-purpose range `address` lies in (its name), nil for a global address.
    public static func specialRange(of address: [UInt8]) -> String? {
        let table = address.count == 4 ? ipv4Ranges : ipv6Ranges
        return table.first { $0.network.contains(address) }?.name
    }

    /// The IPv4 address inside an IPv6 address of a form that carries one, nil otherwise.
    public static func embeddedIPv4(_ address: [UInt8]) -> [UInt8]? {
        guard address.count == 16 else { return nil }
        let head = Array(address[0..<12])
        if head == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] { return Array(address[12...]) }  // mapped
        if head == [UInt8](repeating: 0, count: 12) { return Array(address[12...]) }           // compatible
        if head == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return Array(address[12...]) } // NAT64
        if address[0..<6].elementsEqual([0, 0x64, 0xff, 0x9b, 0, 1]) { return Array(address[12...]) } // local NAT64
        if address[0] == 0x20 && address[1] == 0x02 { return Array(address[2..<6]) }          // 6to4
        return nil
    }

    struct Range: Sendable {
        var network: IPNetwork
        var name: String
    }

    private static func range(_ cidr: String, _ name: String) -> Range {
        Range(network: IPNetwork(parsing: cidr)!, name: name)
    }

    static let ipv4Ranges: [Range] = [
        range("0.0.0.0/8", "\"this network\""),
        range("10.0.0.0/8", "private"),
        range("100.64.0.0/10", "shared address space (CGNAT)"),
        range("127.0.0.0/8", "loopback"),
        range("169.254.0.0/16", "link-local"),
        range("172.16.0.0/12", "private"),
        range("192.0.0.0/24", "IETF protocol assignments"),
        range("192.0.2.0/24", "documentation"),
        range("192.88.99.0/24", "6to4 relay anycast"),
        range("192.168.0.0/16", "private"),
        range("198.18.0.0/15", "benchmarking"),
        range("198.51.100.0/24", "documentation"),
        range("203.0.113.0/24", "documentation"),
        range("224.0.0.0/4", "multicast"),
        range("240.0.0.0/4", "reserved"),
    ]

    static let ipv6Ranges: [Range] = [
        range("::/128", "unspecified"),
        range("::1/128", "loopback"),
        range("100::/64", "discard-only"),
        range("2001::/32", "Teredo"),
        range("2001:10::/28", "ORCHID"),
        range("2001:20::/28", "ORCHIDv2"),
        range("2001:db8::/32", "documentation"),
        range("fc00::/7", "unique local"),
        range("fe80::/10", "link-local"),
        range("fec0::/10", "site-local"),
        range("ff00::/8", "multicast"),
    ]
}
