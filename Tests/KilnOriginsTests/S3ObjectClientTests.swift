import Testing
@testable import KilnOrigins

/// The shared result store's S3 calls: SigV4 for PUT and ListObjects against AWS's published
/// examples ("Signature Calculations for the Authorization Header: Transferring Payload in a Single
/// Chunk": "PUT Object" and "GET Bucket (List Objects)"), the canonical query, and the parsing of
/// a ListObjectsV2 page.
@Suite struct S3ObjectClientTests {
    static let signer = S3RequestSigner(credentials: S3RequestSignerTests.example, region: "us-east-1")

    @Test func thePutObjectExampleGivesAWSsSignature() throws {
        let body = Array("Welcome to Amazon S3.".utf8)
        let hash = S3RequestSigner.payloadHash(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let headers = try #require(Self.signer.headers(
            method: "PUT", url: "https://examplebucket.s3.amazonaws.com/" + S3RequestSigner.encodePath("test$file.text"),
            payloadHash: hash, at: S3RequestSignerTests.exampleTime,
            signing: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")]))
        #expect(S3RequestSignerTests.value("Authorization", in: headers)
            == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
            + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
        #expect(S3RequestSignerTests.value("x-amz-content-sha256", in: headers) == hash)
    }

    @Test func theListObjectsExampleGivesAWSsSignature() throws {
        let headers = try #require(Self.signer.headers(
            method: "GET", url: "https://examplebucket.s3.amazonaws.com/", query: [("prefix", "J"), ("max-keys", "2")],
            at: S3RequestSignerTests.exampleTime))
        #expect(S3RequestSignerTests.value("Authorization", in: headers)
            == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
            + "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func theCanonicalQueryIsSortedAndEncoded() {
        #expect(S3RequestSigner.canonicalQuery([("prefix", "kiln/ab cd/"), ("list-type", "2"), ("continuation-token", "a+b=")])
            == "continuation-token=a%2Bb%3D&list-type=2&prefix=kiln%2Fab%20cd%2F")
        #expect(S3RequestSigner.canonicalQuery([]) == "")
    }

    @Test func objectURLsArePathStyleAndEncoded() {
        let client = S3ObjectClient(endpoint: "http://127.0.0.1:8333/", bucket: "kiln", signer: Self.signer,
                                    fetcher: HTTPFetcher(connectTimeout: 1, timeout: 1, maxRedirects: 3, maxBytes: 1 << 20),
                                    policy: OriginAddressPolicy())
        #expect(client.url(for: "results/0a1b/c d?#") == "http://127.0.0.1:8333/kiln/results/0a1b/c%20d%3F%23")
        #expect(client.fetcher.maxRedirects == 0, "a signed request follows no redirect")
    }

    @Test func aListPageGivesItsKeysAndTheNextToken() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>kiln</Name><Prefix>p/</Prefix>
            <KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>
            <NextContinuationToken>tok&amp;1</NextContinuationToken>
            <Contents><Key>p/a&amp;b</Key><Size>5</Size></Contents><Contents><Key>p/c</Key><Size>7</Size></Contents>
            </ListBucketResult>
            """
        let page = S3ListPage(xml: Array(xml.utf8))
        #expect(page.keys == ["p/a&b", "p/c"])
        #expect(page.truncated)
        #expect(page.nextToken == "tok&1")
        let last = S3ListPage(xml: Array("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>".utf8))
        #expect(last.keys.isEmpty && !last.truncated && last.nextToken == nil)
    }
}
