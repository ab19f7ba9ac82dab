import KilnPipeline
import KilnModel
import Testing
@testable import KilnOrigins
import KilnPipeline

/// `source.origins`: names, base URLs, and the URL of a source path.
@Suite struct OriginTests {
    @Test func aListParsesIntoNamedOrigins() throws {
        let list = try #require(Origin.parseList("photos=https://img.example.com/originals, cms=http://10.0.3.7:8080/media/"))
        #expect(list.map(\.name) == ["photos", "cms"])
        #expect(list.map(\.baseURL) == ["https://img.example.com/originals/", "http://10.0.3.7:8080/media/"])
        #expect(Origin.formatList(list) == "photos=https://img.example.com/originals/,cms=http://10.0.3.7:8080/media/")
        #expect(Origin.parseList("") == [])
    }

    @Test(arguments: [
        "photos", "photos=", "=http://x/", "photos=ftp://x/", "photos=file:///etc/", "photos=http:///nohost",
        "photos=http://user:pw@x/", "photos=http://x/?q=1", "photos=http://x/#f", "a/b=http://x/", "..=http://x/",
        "p=http://x/, p=http://y/",
    ])
    func malformedListsAreRefused(_ raw: String) {
        #expect(Origin.parseList(raw) == nil, "\(raw)")
    }

    @Test func pathSegmentsArePercentEncoded() throws {
        let origin = try #require(Origin(name: "o", baseURL: "http://127.0.0.1:9/base"))
        #expect(origin.url(for: "cat.jpg") == "http://127.0.0.1:9/base/cat.jpg")
        #expect(origin.url(for: "2026/a b?c#d%.jpg") == "http://127.0.0.1:9/base/2026/a%20b%3Fc%23d%25.jpg")
        #expect(origin.url(for: "ünï.jpg") == "http://127.0.0.1:9/base/%C3%BCn%C3%AF.jpg")
    }

    @Test func theConfigurationReadsTheOriginsAndTheirLimits() throws {
        let values = ConfigValues([
            "source.origins": "a=http://127.0.0.1:8081/",
            "source.allowed_networks": "127.0.0.1, 10.0.0.0/8",
            "source.fetch_timeout": "3s",
            "source.revalidate_after": "0",
        ], origin: "test")
        let config = try OriginConfiguration(values)
        #expect(config.origins.map(\.name) == ["a"])
        #expect(config.allowedNetworks.map(\.description) == ["127.0.0.1", "10.0.0.0/8"])
        #expect(config.fetchTimeout == 3 && config.revalidateAfter == 0 && config.maxRedirects == 3)
        #expect(OriginConfiguration().origins.isEmpty && OriginConfiguration().allowedNetworks.isEmpty)
    }
}
