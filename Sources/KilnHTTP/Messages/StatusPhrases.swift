import HTTPTypes

/// The standard reason phrases (RFC 9110) from swift-http-types, by code: what the `Status:` line
/// of a FastCGI answer carries (nginx copies its text into the status line it sends).
enum StatusPhrases {
    static let standard: [HTTPTypes.HTTPResponse.Status] = [
        .continue, .switchingProtocols, .earlyHints,
        .ok, .created, .accepted, .nonAuthoritativeInformation, .noContent, .resetContent, .partialContent,
        .multipleChoices, .movedPermanently, .found, .seeOther, .notModified, .temporaryRedirect, .permanentRedirect,
        .badRequest, .unauthorized, .forbidden, .notFound, .methodNotAllowed, .notAcceptable,
        .proxyAuthenticationRequired, .requestTimeout, .conflict, .gone, .lengthRequired, .preconditionFailed,
        .contentTooLarge, .uriTooLong, .unsupportedMediaType, .rangeNotSatisfiable, .expectationFailed,
        .misdirectedRequest, .unprocessableContent, .tooEarly, .upgradeRequired, .preconditionRequired,
        .tooManyRequests, .requestHeaderFieldsTooLarge, .unavailableForLegalReasons,
        .internalServerError, .notImplemented, .badGateway, .serviceUnavailable, .gatewayTimeout,
        .httpVersionNotSupported, .networkAuthenticationRequired,
    ]

    static let byCode: [Int: String] = Dictionary(standard.map { ($0.code, $0.reasonPhrase) }, uniquingKeysWith: { a, _ in a })

    /// The phrase of `code`: the standard one; nginx's name for its own 499; else by class.
    static func phrase(_ code: Int) -> String {
        if let known = byCode[code] { return known }
        if code == 499 { return "Client Closed Request" }
        switch code {
        case 100..<200: return "Informational"
        case 200..<300: return "Success"
        case 300..<400: return "Redirection"
        case 400..<500: return "Client Error"
        default: return "Server Error"
        }
    }
}
