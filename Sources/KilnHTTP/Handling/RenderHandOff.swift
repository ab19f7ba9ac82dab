import KilnModel
import KilnPipeline

/// How a lookup lane worker (`server.lookup_workers`) passes a request it could not answer from
/// the caches to the render workers: an `X-Accel-Redirect` to one of nginx's internal locations
/// (`nginx/kiln-lookup.conf`), which sends the same request to the render socket. nginx never
/// shows the hand-off to the client; the render worker sees the client's `REQUEST_URI` (nginx
/// keeps it across the redirect) and, through the location, the `DOCUMENT_URI` the lane saw and
/// whether nginx had marked the request trusted. So the render worker checks everything again
/// (signature, policy, allow-lists, budgets): the lane is no way around them, and a client can
/// reach neither location (`internal`).
public enum RenderHandOff {
    /// The internal location of untrusted requests; the lane's `DOCUMENT_URI` follows it.
    public static let location = "/_kiln_render"
    /// The same for requests nginx marked trusted (its rewrites): the location sets `KILN_TRUSTED`.
    public static let trustedLocation = "/_kiln_render_trusted"

    /// The answer that hands `request` off: no body, `X-Accel-Redirect` to the location with the
    /// path the lane saw, percent-encoded (nginx decodes it again into the same `DOCUMENT_URI`),
    /// and the query string.
    public static func response(for request: HTTPRequest) -> HTTPResponse {
        let path = request.documentURI.flatMap { $0.isEmpty ? nil : $0 } ?? String(request.rawPath)
        let query = request.uri.firstIndex(of: "?").map { String(request.uri[$0...]) } ?? ""
        let target = (request.isTrusted ? trustedLocation : location)
            + PercentEncoding.encode(path, keeping: .unreservedAndSlash) + query
        var response = HTTPResponse(status: 200, headers: [(HeaderName.xAccelRedirect, target), (HeaderName.contentLength, "0")], body: [])
        response.reason = "handed to a render worker"
        return response
    }

    /// Whether `error` is a lane's miss.
    public static func isHandOff(_ error: any Error) -> Bool {
        (error as? PipelineFailure)?.kind == .renderElsewhere
    }
}
