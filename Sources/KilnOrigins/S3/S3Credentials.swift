/// An AWS access key: its ID, its secret and, for temporary credentials, the session token
/// (sent as `x-amz-security-token`). The description names the key ID only: the secret and the
/// token never reach logs, configuration listings or error messages.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "access key \(accessKeyID) (secret\(sessionToken == nil ? "" : " and session token") not shown)"
    }

    public var debugDescription: String { description }

    /// The environment's `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`;
    /// nil unless both of the first two are set and not empty.
    public static func fromEnvironment(_ variable: (String) -> String?) -> S3Credentials? {
        guard let id = variable("AWS_ACCESS_KEY_ID"), !id.isEmpty,
              let secret = variable("AWS_SECRET_ACCESS_KEY"), !secret.isEmpty else { return nil }
        let token = variable("AWS_SESSION_TOKEN").flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// Why a shared credentials file gave no credentials (never quoting a value from it).
    public enum FileProblem: Error, Equatable, Sendable {
        /// No `[profile]` section.
        case noProfile(String)
        /// The section lacks `aws_access_key_id` or `aws_secret_access_key`.
        case incomplete(String)
    }

    /// The credentials of `profile` in the AWS shared credentials format (`~/.aws/credentials`):
    ///
    ///     [default]
    ///     aws_access_key_id = AKIA...
    ///     aws_secret_access_key = ...
    ///     aws_session_token = ...      ; optional
    ///
    /// Sections are `[name]` (or `[profile name]`, as in `~/.aws/config`); lines starting with `#`
    /// or `;` are comments; keys are case-insensitive; other keys are ignored.
    public static func parseSharedFile(_ text: String, profile: String) -> Result<S3Credentials, FileProblem> {
        var inProfile = false
        var found = false
        var fields: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingSpacesAndTabs()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                var name = line.dropFirst().dropLast().trimmingSpacesAndTabs()
                if name.hasPrefix("profile ") { name = name.dropFirst("profile ".count).trimmingSpacesAndTabs() }
                inProfile = name == profile
                if inProfile { found = true }
                continue
            }
            guard inProfile, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingSpacesAndTabs().lowercased()
            fields[key] = line[line.index(after: eq)...].trimmingSpacesAndTabs()
        }
        guard found else { return .failure(.noProfile(profile)) }
        guard let id = fields["aws_access_key_id"], !id.isEmpty,
              let secret = fields["aws_secret_access_key"], !secret.isEmpty else { return .failure(.incomplete(profile)) }
        let token = fields["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 }
        return .success(S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token))
    }
}
