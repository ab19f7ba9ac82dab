import Testing
@testable import KilnCore

@Suite struct ConfigValuesTests {
    @Test func parsesSectionsCommentsAndQuotes() throws {
        let text = """
        # top comment
        [server]
        workers = 4   # inline
        listen = "unix:/tmp/k.sock"

        [limits]
        max_pixels = 20m
        """
        let v = try ConfigValues.parseFile(text, name: "kiln.conf")
        #expect(v == ["server.workers": "4", "server.listen": "unix:/tmp/k.sock", "limits.max_pixels": "20m"])
    }

    @Test func keyOutsideSectionIsASyntaxError() {
        #expect(throws: ConfigError.syntax(file: "f", line: 1, text: "workers = 4")) {
            try ConfigValues.parseFile("workers = 4", name: "f")
        }
    }

    @Test func environmentMapsToSectionKeys() {
        let v = ConfigValues.fromEnvironment(["KILN_LIMITS_MAX_PIXELS": "5", "KILN_SERVER_WORKERS": "2", "PATH": "/bin"])
        #expect(v == ["limits.max_pixels": "5", "server.workers": "2"])
    }

    @Test func laterLayersWinAndValuesAreValidated() throws {
        var v = ConfigValues(["server.workers": "2"], origin: "file")
        v.merge(["server.workers": "3"], origin: "environment")
        #expect(try v.int("server.workers", default: 1, in: 1...8) == 3)
        v.merge(["server.workers": "99"], origin: "flag")
        #expect(throws: ConfigError.self) { try v.int("server.workers", default: 1, in: 1...8) }
    }

    @Test func sizesDurationsAndBools() throws {
        let v = ConfigValues(["a.size": "100MB", "a.k": "512KB", "a.t": "500ms", "a.m": "2m", "a.b": "off", "a.bad": "maybe"])
        #expect(try v.bytes("a.size", default: 0, in: 0...Int.max) == 100 << 20)
        #expect(try v.bytes("a.k", default: 0, in: 0...Int.max) == 512 << 10)
        #expect(try v.seconds("a.t", default: 0, in: 0...100) == 0.5)
        #expect(try v.seconds("a.m", default: 0, in: 0...1000) == 120)
        #expect(try v.bool("a.b", default: true) == false)
        #expect(throws: ConfigError.self) { try v.bool("a.bad", default: true) }
        #expect(try v.int("a.missing", default: 7, in: 0...10) == 7)
    }
}
