import Glibc
import KilnModel
import KilnPipeline
import KilnPOSIX

/// What S3 origins sign their GETs with: the credentials of the environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional `AWS_SESSION_TOKEN`) or, when those are
/// not set, of `source.s3_credentials_file` (profile `source.s3_profile`), and `source.s3_region`.
///
/// Each process resolves them itself when it builds its pipeline: the master when it checks the
/// settings (at start and on SIGHUP: no credentials is a configuration error, so nothing starts
/// that would answer every S3 request with a 403), each worker at start (workers inherit the
/// master's environment through `posix_spawn`; they read the file themselves). The credentials are
/// never settings: they are not in the settings snapshot, `kiln config show` or any message.
public enum S3Access {
    /// The signer for `source`'s S3 origins. Throws a `ConfigError` naming what is missing.
    public static func signer(for source: OriginConfiguration,
                              environment: (String) -> String? = S3Access.processVariable) throws(ConfigError) -> S3RequestSigner {
        S3RequestSigner(credentials: try credentials(for: source, environment: environment), region: source.s3Region)
    }

    static func credentials(for source: OriginConfiguration, environment: (String) -> String?) throws(ConfigError) -> S3Credentials {
        if let fromEnvironment = S3Credentials.fromEnvironment(environment) { return fromEnvironment }
        let file = source.s3CredentialsFile
        let fileKey = OriginConfiguration.Key.s3CredentialsFile.key
        guard !file.isEmpty else {
            throw .unavailable("source.origins has s3:// origins (\(s3Names(source))) but no credentials: "
                + "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in kiln's environment, or \(fileKey)")
        }
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try Files.read(file)
        } catch {
            throw .unavailable("\(fileKey) \(file): cannot read it (\(Errno.text(error.code)))")
        }
        let profile = source.s3Profile
        switch S3Credentials.parseSharedFile(String(decoding: bytes, as: UTF8.self), profile: profile) {
        case .success(let credentials):
            return credentials
        case .failure(.noProfile):
            throw .unavailable("\(fileKey) \(file): no [\(profile)] section (source.s3_profile)")
        case .failure(.incomplete):
            throw .unavailable("\(fileKey) \(file): section [\(profile)] lacks aws_access_key_id or aws_secret_access_key")
        }
    }

    static func s3Names(_ source: OriginConfiguration) -> String {
        source.origins.filter { $0.kind == .s3 }.map(\.name).joined(separator: ", ")
    }

    /// The `<Code>` of an S3 error body (`SignatureDoesNotMatch`, `InvalidAccessKeyId`,
    /// `AccessDenied`…), for the one-line reason of a refused fetch; nil unless it is a short word.
    public static func errorCode(in body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        guard let start = text.firstRange(of: "<Code>")?.upperBound,
              let end = text[start...].firstRange(of: "</Code>")?.lowerBound else { return nil }
        let code = text[start..<end]
        guard (1...64).contains(code.utf8.count),
              code.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) })
        else { return nil }
        return String(code)
    }

    /// `getenv`, with an empty value as unset.
    public static func processVariable(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
