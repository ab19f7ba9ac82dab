import Foundation
import KilnPipeline
import KilnModel
import Testing
@testable import KilnOrigins
import KilnPipeline

/// `name=s3://bucket/prefix/` origins, the S3 settings and where credentials come from.
@Suite struct S3OriginTests {
    @Test func s3EntriesParseNextToHTTPOnes() throws {
        let list = try #require(Origin.parseList("media=s3://my-bucket/photos/2024, web=https://img.example.com/, raw=s3://raw.bucket"))
        #expect(list.map(\.kind) == [.s3, .http, .s3])
        #expect(list.map(\.baseURL) == ["s3://my-bucket/photos/2024/", "https://img.example.com/", "s3://raw.bucket/"])
        #expect(list.map(\.bucket) == ["my-bucket", nil, "raw.bucket"])
        #expect(Origin.formatList(list) == "media=s3://my-bucket/photos/2024/,web=https://img.example.com/,raw=s3://raw.bucket/")
    }

    @Test(arguments: [
        "m=s3://", "m=s3:///prefix", "m=s3://ab/", "m=s3://My-Bucket/", "m=s3://-bucket/", "m=s3://bucket-/",
        "m=s3://bu cket/", "m=s3://bucket/a?b", "m=s3://bucket/a#b", "m=s3://bucket/../other", "m=s3://bucket/a/./b",
        "m=s3://bucket/a\\b", "m=s3://bucket/ä",
    ])
    func malformedS3EntriesAreRefused(_ raw: String) {
        #expect(Origin.parseList(raw) == nil, "\(raw)")
    }

    @Test func anS3OriginIsAddressedPathStyleWithKeysEncodedOnce() throws {
        let origin = try #require(Origin(name: "m", baseURL: "s3://my-bucket/photos+2024/"))
        let at = origin.addressed(at: "http://127.0.0.1:5000")
        #expect(at.kind == .s3 && at.name == "m")
        #expect(at.baseURL == "http://127.0.0.1:5000/my-bucket/photos%2B2024/")
        #expect(at.url(for: "a b/ünï+(1).jpg") == "http://127.0.0.1:5000/my-bucket/photos%2B2024/a%20b/%C3%BCn%C3%AF%2B%281%29.jpg")
        let bare = try #require(Origin(name: "m", baseURL: "s3://my-bucket")).addressed(at: "https://s3.eu-west-1.amazonaws.com")
        #expect(bare.url(for: "cat.jpg") == "https://s3.eu-west-1.amazonaws.com/my-bucket/cat.jpg")
        // HTTP origins are not changed by an endpoint.
        let http = try #require(Origin(name: "h", baseURL: "http://x/"))
        #expect(http.addressed(at: "http://127.0.0.1:5000") == http)
    }

    @Test func theS3Settings() throws {
        let defaults = OriginConfiguration()
        #expect(defaults.s3Endpoint == "" && defaults.s3Region == "us-east-1" && defaults.s3Profile == "default"
            && defaults.s3CredentialsFile == "")
        #expect(defaults.s3EndpointURL == "https://s3.us-east-1.amazonaws.com")
        let config = try OriginConfiguration(ConfigValues([
            "source.s3_endpoint": "HTTP://LocalHost:5000/", "source.s3_region": "eu-west-1", "source.s3_profile": "images",
        ], origin: "test"))
        #expect(config.s3EndpointURL == "http://localhost:5000" && config.s3Region == "eu-west-1" && config.s3Profile == "images")
        for (key, value) in [("source.s3_endpoint", "ftp://x"), ("source.s3_endpoint", "http://x/?q"), ("source.s3_region", ""),
                             ("source.s3_region", "EU West"), ("source.s3_profile", "")] {
            #expect(throws: ConfigError.self, "\(key)=\(value)") { try OriginConfiguration(ConfigValues([key: value], origin: "test")) }
        }
    }

    @Test func credentialsComeFromTheEnvironmentFirstThenTheFile() throws {
        var source = try OriginConfiguration(ConfigValues(["source.origins": "media=s3://my-bucket/"], origin: "test"))
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"]
        #expect(try S3Access.signer(for: source) { environment[$0] }.credentials.accessKeyID == "AKIDENV")
        // No environment, no file: a configuration error that names the way out and no secret.
        do {
            _ = try S3Access.signer(for: source) { _ in nil }
            Issue.record("no credentials accepted")
        } catch {
            #expect("\(error)".contains("media") && "\(error)".contains("AWS_ACCESS_KEY_ID")
                && "\(error)".contains("source.s3_credentials_file"))
        }
        let file = "/tmp/kiln-s3-credentials-\(UInt32.random(in: 0...UInt32.max))"
        try Data("[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n".utf8)
            .write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        source.s3CredentialsFile = file
        #expect(try S3Access.signer(for: source) { _ in nil }.credentials.accessKeyID == "AKIDFILE")
        #expect(try S3Access.signer(for: source) { environment[$0] }.credentials.accessKeyID == "AKIDENV")
        source.s3Profile = "other"
        #expect(throws: ConfigError.self) { try S3Access.signer(for: source) { _ in nil } }
        source.s3CredentialsFile = file + ".missing"
        #expect(throws: ConfigError.self) { try S3Access.signer(for: source) { _ in nil } }
    }

    @Test func theCodeOfAnS3ErrorNamesWhyAFetchWasRefused() {
        let body = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error>
            """.utf8)
        #expect(S3Access.errorCode(in: body) == "SignatureDoesNotMatch")
        #expect(S3Access.errorCode(in: Array("<Error><Code>a b</Code></Error>".utf8)) == nil)
        #expect(S3Access.errorCode(in: Array("<Error><Code>Unclosed".utf8)) == nil)
        #expect(S3Access.errorCode(in: Array("down".utf8)) == nil)
    }
}
