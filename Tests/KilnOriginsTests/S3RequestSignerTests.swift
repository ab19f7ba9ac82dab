import KilnModel
import Testing
@testable import KilnOrigins
import KilnPipeline

/// SigV4 for S3 GETs against AWS's published examples ("Signature Calculations for the
/// Authorization Header: Transferring Payload in a Single Chunk", example "GET Object"; "Examples
/// of how to derive a signing key"), plus the encoding, the date, the Host rule and credentials.
@Suite struct S3RequestSignerTests {
    static let example = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                       secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 20130524T000000Z.
    static let exampleTime: Int64 = 1_369_353_600
    static let empty = S3RequestSigner.emptyPayloadHash

    static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test func theGetObjectExampleGivesAWSsSignature() throws {
        let signer = S3RequestSigner(credentials: Self.example, region: "us-east-1")
        let headers = try #require(signer.headers(get: "https://examplebucket.s3.amazonaws.com/test.txt", at: Self.exampleTime,
                                                  signing: [("Range", "bytes=0-9")]))
        #expect(Self.value("Authorization", in: headers)
            == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(Self.value("x-amz-date", in: headers) == "20130524T000000Z")
        #expect(Self.value("x-amz-content-sha256", in: headers) == Self.empty)
        #expect(Self.value("x-amz-security-token", in: headers) == nil)
        #expect(Self.value("Range", in: headers) == nil, "the caller sends the headers it asked to sign")
    }

    @Test func theExamplesCanonicalRequestAndStringToSign() {
        let (request, names) = S3RequestSigner.canonicalRequest(
            method: "GET", path: "/test.txt",
            headers: [("Host", "examplebucket.s3.amazonaws.com"), ("x-amz-date", "20130524T000000Z"),
                      ("Range", "bytes=0-9"), ("x-amz-content-sha256", Self.empty)],
            payloadHash: Self.empty)
        #expect(names == "host;range;x-amz-content-sha256;x-amz-date")
        #expect(request == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:\(Self.empty)
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            \(Self.empty)
            """)
        #expect(S3RequestSigner.stringToSign(canonicalRequest: request, amzDate: "20130524T000000Z",
                                             scope: "20130524/us-east-1/s3/aws4_request") == """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
            """)
    }

    @Test func theSigningKeyDerivationExample() {
        let key = S3RequestSigner.signingKey(secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", day: "20120215",
                                             region: "us-east-1", service: "iam")
        #expect(key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    @Test(arguments: [
        ("test.txt", "test.txt"),
        ("photos/2024/cat.jpg", "photos/2024/cat.jpg"),
        ("a b+c.jpg", "a%20b%2Bc.jpg"),
        ("ünï/çødé.png", "%C3%BCn%C3%AF/%C3%A7%C3%B8d%C3%A9.png"),
        ("a~b_c-d.e", "a~b_c-d.e"),
        ("x!$&'()*,;=:@y", "x%21%24%26%27%28%29%2A%2C%3B%3D%3A%40y"),
        ("50%.jpg", "50%25.jpg"),
    ])
    func pathsAreEncodedOnceWithSlashesKept(_ key: String, _ expected: String) {
        #expect(S3RequestSigner.encodePath(key) == expected)
    }

    @Test(arguments: [
        (Int64(0), "19700101T000000Z"),
        (Int64(1_369_353_600), "20130524T000000Z"),
        (Int64(951_782_400), "20000229T000000Z"),
        (Int64(1_709_251_199), "20240229T235959Z"),
        (Int64(4_102_444_800), "21000101T000000Z"),
        (Int64(-1), "19691231T235959Z"),
    ])
    func amzDates(_ seconds: Int64, _ expected: String) {
        #expect(S3RequestSigner.amzDate(seconds) == expected)
    }

    @Test func theHostIsSignedAsCurlSendsIt() throws {
        let signer = S3RequestSigner(credentials: Self.example, region: "us-east-1")
        let base = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        // A scheme's default port is not in the Host header, so it does not change the signature.
        let withPort = try #require(signer.headers(get: "https://examplebucket.s3.amazonaws.com:443/test.txt",
                                                   at: Self.exampleTime, signing: [("Range", "bytes=0-9")]))
        #expect(Self.value("Authorization", in: withPort) == base)
        // Any other port is, and does.
        let other = try #require(signer.headers(get: "https://examplebucket.s3.amazonaws.com:8443/test.txt",
                                                at: Self.exampleTime, signing: [("Range", "bytes=0-9")]))
        #expect(Self.value("Authorization", in: other) != base)
        #expect(signer.headers(get: "ftp://examplebucket/test.txt", at: 0) == nil)
        #expect(signer.headers(get: "https://examplebucket/test.txt?acl", at: 0) == nil)
    }

    @Test func aSessionTokenIsSentAndSigned() throws {
        var credentials = Self.example
        credentials.sessionToken = "FQoGZXIvYXdzEXAMPLETOKEN"
        let signer = S3RequestSigner(credentials: credentials, region: "eu-west-1")
        let headers = try #require(signer.headers(get: "http://127.0.0.1:5000/bucket/a%20b.jpg", at: Self.exampleTime))
        #expect(Self.value("x-amz-security-token", in: headers) == "FQoGZXIvYXdzEXAMPLETOKEN")
        let authorization = try #require(Self.value("Authorization", in: headers))
        #expect(authorization.contains("/20130524/eu-west-1/s3/aws4_request,"))
        #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
        // Another secret gives another signature; the key ID is in the header, the secret is not.
        var other = signer
        other.credentials.secretAccessKey = "another"
        #expect(Self.value("Authorization", in: other.headers(get: "http://127.0.0.1:5000/bucket/a%20b.jpg", at: Self.exampleTime) ?? [])
            != authorization)
        #expect(!authorization.contains(Self.example.secretAccessKey))
    }

    @Test func credentialsNeverDescribeTheirSecrets() {
        let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t-value", sessionToken: "tok3n-value")
        for text in [credentials.description, "\(credentials)", String(reflecting: credentials)] {
            #expect(text.contains("AKIDEXAMPLE"))
            #expect(!text.contains("s3cr3t-value") && !text.contains("tok3n-value"))
        }
    }

    @Test func credentialsFromTheEnvironment() {
        let full = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"]
        #expect(S3Credentials.fromEnvironment { full[$0] }
            == S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: "token"))
        let noToken = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": ""]
        #expect(S3Credentials.fromEnvironment { noToken[$0] }?.sessionToken == nil)
        let emptySecret = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": ""]
        #expect(S3Credentials.fromEnvironment { emptySecret[$0] } == nil)
        #expect(S3Credentials.fromEnvironment { _ in nil } == nil)
    }

    @Test func theSharedCredentialsFile() {
        let text = """
            # comment
            [default]
            aws_access_key_id = AKIDDEFAULT
            aws_secret_access_key=default/secret+key

            [profile images]
            ; another comment
            AWS_ACCESS_KEY_ID\t=  AKIDIMAGES
            aws_secret_access_key = images-secret
            aws_session_token = images-token
            region = eu-west-1

            [broken]
            aws_access_key_id = AKIDBROKEN
            """
        #expect(S3Credentials.parseSharedFile(text, profile: "default")
            == .success(S3Credentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: "default/secret+key")))
        #expect(S3Credentials.parseSharedFile(text, profile: "images")
            == .success(S3Credentials(accessKeyID: "AKIDIMAGES", secretAccessKey: "images-secret", sessionToken: "images-token")))
        #expect(S3Credentials.parseSharedFile(text, profile: "broken") == .failure(.incomplete("broken")))
        #expect(S3Credentials.parseSharedFile(text, profile: "nobody") == .failure(.noProfile("nobody")))
        #expect(S3Credentials.parseSharedFile("[default]\r\naws_access_key_id=A\r\naws_secret_access_key=B\r\n", profile: "default")
            == .success(S3Credentials(accessKeyID: "A", secretAccessKey: "B")))
    }
}
