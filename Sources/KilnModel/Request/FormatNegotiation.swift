/// What `f:auto` may answer a client with, decided from what the client accepts before the source
/// is read: the offered formats (`http.auto_formats`, best first, default AVIF then WebP) that the
/// client accepts.
///
/// Every `Accept` value collapses into one of a few classes, named by `token`: `avif+webp`
/// (Chromium, Firefox, Safari 17), `avif`, `webp` (e.g. `image/webp,*/*` or `image/*`), and
/// `source` (`*/*`, no header, or nothing offered). The class is the `f:auto` part of the cache
/// key, so one class never gets another's entry, and the rendered format is a function of the
/// class and the source only (`choice(where:)`).
///
/// Acceptance: WebP by an exact `image/webp` or `image/*` entry with q > 0 (as before); AVIF only by
/// an exact `image/avif` entry with q > 0: clients that send `image/*` include browsers without
/// AVIF (Safari before 16, older Edge), and a wrong guess breaks the image. `*/*` never counts.
public struct FormatNegotiation: Sendable, Hashable {
    /// The formats `f:auto` may pick when `http.auto_formats` is not set.
    public static let defaultOffered: [ImageFormat] = [.avif, .webp]

    /// The offered formats the client accepts, best first.
    public let formats: [ImageFormat]

    /// The class of a client that accepts `formats` (best first): the HTTP layer parses `Accept`
    /// into it once (`KilnHTTP`'s `FormatNegotiation(accept:offered:)`).
    public init(formats: [ImageFormat]) {
        self.formats = formats
    }

    /// A client that accepts none of the offered formats (no `Accept`, `*/*`, `kiln process`).
    public static let sourceOnly = FormatNegotiation(formats: [])

    /// The same class restricted to the formats for which `keep` holds (e.g. those with an encoder).
    public func filtered(_ keep: (ImageFormat) -> Bool) -> FormatNegotiation {
        FormatNegotiation(formats: formats.filter(keep))
    }

    /// The cache-key token of the class: the accepted formats joined by `+`, or `source`.
    public var token: String {
        formats.isEmpty ? "source" : formats.map(\.rawValue).joined(separator: "+")
    }

    /// The format `f:auto` answers with: the first accepted format for which `usable` holds (today:
    /// the format can hold the result's size; the seam for other conditions, e.g. animation), nil
    /// when none does (the caller then keeps the source's format or falls back).
    public func choice(where usable: (ImageFormat) -> Bool) -> ImageFormat? {
        formats.first(where: usable)
    }
}
