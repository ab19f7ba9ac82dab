import KilnModel
import HTTPTypes

/// The header fields Kiln writes and reads, spelt once: swift-http-types' registry
/// (`HTTPField.Name`) where it has them, Kiln's own (`X-Cache`, `X-Request-Id`) and the few the
/// registry lacks (`Server-Timing`, `Timing-Allow-Origin`, `CDN-Cache-Control`, the surrogate
/// keys) declared here through `HTTPField.Name` too, so each is checked as a valid field name.
///
/// Names are as sent (`rawName`); a request's headers are keyed by the lowercase name
/// (`HTTPRequest.headers`), which the `Request` names give.
public enum HeaderName {
    public static let contentType = HTTPField.Name.contentType.rawName
    public static let contentLength = HTTPField.Name.contentLength.rawName
    public static let cacheControl = HTTPField.Name.cacheControl.rawName
    public static let eTag = HTTPField.Name.eTag.rawName
    public static let lastModified = HTTPField.Name.lastModified.rawName
    public static let vary = HTTPField.Name.vary.rawName
    public static let allow = HTTPField.Name.allow.rawName
    public static let retryAfter = HTTPField.Name.retryAfter.rawName
    public static let xContentTypeOptions = HTTPField.Name.xContentTypeOptions.rawName
    public static let accept = HTTPField.Name.accept.rawName
    public static let contentDisposition = HTTPField.Name.contentDisposition.rawName
    public static let accessControlAllowOrigin = HTTPField.Name.accessControlAllowOrigin.rawName
    public static let location = HTTPField.Name.location.rawName
    public static let xCache = own("X-Cache")
    /// nginx's internal redirect (a lookup lane's hand-off to the render workers: `RenderHandOff`).
    public static let xAccelRedirect = own("X-Accel-Redirect")
    public static let xRequestID = own("X-Request-Id")
    public static let serverTiming = own("Server-Timing")
    public static let timingAllowOrigin = own("Timing-Allow-Origin")
    public static let cdnCacheControl = own("CDN-Cache-Control")
    /// `fit` or `exceeded`: answers of `max_bytes:<n>` requests (`PipelineResult.fitsByteBudget`).
    public static let kilnMaxBytes = own("Kiln-Max-Bytes")
    /// Surrogate keys (`SurrogateKeys`): Fastly's, Varnish vmod-xkey's and Cloudflare's names.
    public static let surrogateKey = own("Surrogate-Key")
    public static let xkey = own("xkey")
    public static let cacheTag = own("Cache-Tag")
    /// Says that a fallback image was answered, and for which failure class (`FallbackImages`).
    public static let kilnFallback = own("Kiln-Fallback")

    /// Client Hints and Save-Data (`ClientHints`): as sent, for `Vary`. The legacy names (`DPR`,
    /// `Width`, `Viewport-Width`) are accepted too, so they are listed beside the `Sec-CH-` ones.
    /// The names are `RequestInput`'s, declared once in KilnModel with the classes edges keep.
    public enum Hint {
        public static let dpr = own(RequestInput.dpr.name)
        public static let width = own(RequestInput.width.name)
        public static let viewportWidth = own(RequestInput.viewportWidth.name)
        public static let legacyDPR = own(RequestInput.dpr.legacyNames[0])
        public static let legacyWidth = own(RequestInput.width.legacyNames[0])
        public static let legacyViewportWidth = own(RequestInput.viewportWidth.legacyNames[0])
        public static let saveData = own(RequestInput.saveData.name)
        public static let ect = own(RequestInput.ect.name)
    }

    /// The lowercase keys of the request headers Kiln reads.
    public enum Request {
        public static let accept = HTTPField.Name.accept.canonicalName
        public static let ifNoneMatch = HTTPField.Name.ifNoneMatch.canonicalName
        public static let ifModifiedSince = HTTPField.Name.ifModifiedSince.canonicalName
        public static let origin = HTTPField.Name.origin.canonicalName
        public static let xRequestID = HTTPField.Name(HeaderName.xRequestID)!.canonicalName
    }

    private static func own(_ name: String) -> String {
        HTTPField.Name(name)!.rawName
    }
}
