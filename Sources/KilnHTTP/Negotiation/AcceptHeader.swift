import KilnModel

/// A parsed HTTP `Accept` header, enough to ask whether a media type is allowed.
public struct AcceptHeader: Sendable {
    struct Entry { var type: String; var q: Double }
    let entries: [Entry]

    public init(_ header: String) {
        entries = header.split(separator: ",").compactMap { part in
            let fields = part.split(separator: ";").map { $0.trimmingSpacesAndTabs() }
            guard let type = fields.first?.lowercased(), !type.isEmpty else { return nil }
            var q = 1.0
            for param in fields.dropFirst() where param.hasPrefix("q=") {
                q = Double(param.dropFirst(2)) ?? 1.0
            }
            return Entry(type: type, q: q)
        }
    }

    /// True when `mediaType` is accepted with q > 0 by an exact entry or `image/*`
    /// (`*/*` is not taken as a yes: browsers that send only `*/*` may not decode WebP).
    public func allows(_ mediaType: String) -> Bool {
        let type = mediaType.lowercased()
        if let exact = entries.first(where: { $0.type == type }) { return exact.q > 0 }
        let family = type.split(separator: "/").first.map { "\($0)/*" } ?? ""
        if let wildcard = entries.first(where: { $0.type == family }) { return wildcard.q > 0 }
        return false
    }

    /// True when `mediaType` is listed by name with q > 0 (no wildcard counts).
    public func allowsExactly(_ mediaType: String) -> Bool {
        let type = mediaType.lowercased()
        return entries.first(where: { $0.type == type }).map { $0.q > 0 } ?? false
    }
}

extension FormatNegotiation {
    /// The class of a client sending `accept` (its `Accept` header, nil when absent): the offered
    /// formats it accepts. WebP by an exact `image/webp` or `image/*` entry with q > 0; AVIF only by
    /// an exact `image/avif` entry with q > 0 (clients that send `image/*` include browsers without
    /// AVIF); `*/*` never counts. The one place the header is parsed.
    public init(accept: String?, offered: [ImageFormat] = FormatNegotiation.defaultOffered) {
        guard let accept, !offered.isEmpty else {
            self.init(formats: [])
            return
        }
        let header = AcceptHeader(accept)
        self.init(formats: offered.filter { format in
            format == .avif ? header.allowsExactly(format.mimeType) : header.allows(format.mimeType)
        })
    }
}
